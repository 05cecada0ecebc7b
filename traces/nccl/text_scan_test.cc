// The SSE2 line and digit scans (text_scan_sse2.h) against their byte-at-a-time reference
// (text_scan_scalar.h), side by side on the same bytes: every fixture, and generated texts that
// put each interesting byte at each offset of every length around the 16- and 64-byte blocks.
// The parser takes whichever text_scan.h picks, so a difference here is a parse that depends on
// the build target.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "traces/nccl/text_scan_scalar.h"
#if defined(__SSE2__)
#include "traces/nccl/text_scan_sse2.h"
#endif

namespace collide::traces::nccl {
namespace {

#if defined(__SSE2__)

using namespace std::string_view_literals;

// A text copied to a heap block of exactly its size, so that the text's end is the block's end:
// a scan reading past it is caught under AddressSanitizer.
class Text {
 public:
  explicit Text(std::string_view bytes)
      : bytes_(std::make_unique<char[]>(bytes.size())), size_(bytes.size()) {
    if (size_ != 0) std::memcpy(bytes_.get(), bytes.data(), size_);
  }
  const char* begin() const { return bytes_.get(); }
  const char* end() const { return bytes_.get() + size_; }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_;
};

// What callers may rely on (LineScan): the counts agree up to three.
bool same(const LineScan& a, const LineScan& b) {
  return a.end == b.end && a.first_capital == b.first_capital &&
         std::min(a.capitals, 3u) == std::min(b.capitals, 3u);
}

std::string show(const LineScan& s, const char* b) {
  const std::string first =
      s.first_capital == nullptr ? "none" : std::to_string(s.first_capital - b);
  return "{end " + std::to_string(s.end - b) + ", first N " + first + ", Ns " +
         std::to_string(s.capitals) + "}";
}

// Where the next line starts (the text's end after the last).
const char* after(const LineScan& s, const char* e) {
  return s.end == e ? e : s.end + 1;
}

// Both finders over the text's lines from `p`, as the parser walks them, and also the ways it
// may move on: `skip_every` > 0 skips a line after every that many (a joined continuation), and
// `extra` starts the next call that many bytes into the next line.
testing::AssertionResult same_walk(const Text& t, const char* p, unsigned skip_every,
                                   unsigned extra) {
  const char* b = t.begin();
  const char* e = t.end();
  scalar::LineFinder reference(e);
  sse2::LineFinder simd(e);
  for (unsigned line = 0; p < e; ++line) {
    const LineScan want = reference.next(p);
    const LineScan got = simd.next(p);
    if (!same(want, got)) {
      return testing::AssertionFailure()
             << "LineFinder at " << p - b << " of " << e - b << " (skip_every " << skip_every
             << ", extra " << extra << "): scalar " << show(want, b) << ", sse2 " << show(got, b);
    }
    p = after(want, e);
    if (skip_every != 0 && line % skip_every == 0) p = after(scalar::scan_line(p, e), e);
    if (static_cast<size_t>(e - p) <= extra) break;
    p += extra;
  }
  return testing::AssertionSuccess();
}

// How a walk moves on after each line: see same_walk.
struct Walk {
  unsigned skip_every;
  unsigned extra;
};
constexpr Walk kWalks[] = {{0, 0}, {1, 0}, {3, 0}, {0, 1}, {0, 15}, {0, 16}, {0, 63}, {2, 17}};

// scan_line from every start (the text's end included), the masks at every offset with 16
// readable bytes, and LineFinder walks from each of the first `walk_starts` offsets.
testing::AssertionResult same_scans(std::string_view bytes, size_t walk_starts) {
  const Text t(bytes);
  const char* b = t.begin();
  const char* e = t.end();
  for (size_t start = 0; start <= bytes.size(); ++start) {
    const char* p = b + start;
    const LineScan want = scalar::scan_line(p, e);
    const LineScan got = sse2::scan_line(p, e);
    if (!same(want, got)) {
      return testing::AssertionFailure()
             << "scan_line from " << p - b << " of " << e - b << ": scalar " << show(want, b)
             << ", sse2 " << show(got, b);
    }
  }
  for (const char* q = b; e - q >= 16; ++q) {
    if (scalar::decimal_mask16(q) != sse2::decimal_mask16(q)) {
      return testing::AssertionFailure()
             << "decimal_mask16 at " << q - b << ": scalar " << scalar::decimal_mask16(q)
             << ", sse2 " << sse2::decimal_mask16(q);
    }
    if (scalar::hex_mask16(q) != sse2::hex_mask16(q)) {
      return testing::AssertionFailure()
             << "hex_mask16 at " << q - b << ": scalar " << scalar::hex_mask16(q) << ", sse2 "
             << sse2::hex_mask16(q);
    }
  }
  const size_t starts = std::min(walk_starts, bytes.size());
  for (size_t start = 0; start < starts; ++start) {
    for (const Walk& w : kWalks) {
      auto walk = same_walk(t, b + start, w.skip_every, w.extra);
      if (!walk) return walk;
    }
  }
  return testing::AssertionSuccess();
}

// Walks start at each offset of a 64-byte block and a little past it.
constexpr size_t kWalkStarts = 66;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(TextScanPaths, AgreeOnEveryFixture) {
  for (const char* dir : {COLLIDE_NCCL_TESTDATA, COLLIDE_NCCL_FUZZ_CORPUS}) {
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      ++files;
      ASSERT_TRUE(same_scans(read_file(entry.path()), kWalkStarts)) << entry.path();
    }
    EXPECT_GT(files, 0) << dir;  // not vacuous: the folder was found and read
  }
}

// The bytes the scans tell apart, and their neighbours: the newline and N (and 'J', 0x0E, which
// LineFinder's one compare also marks), the ends of the digit and hex ranges in both cases, and
// bytes with the high bit set, which the signed compares of the masks must not take as digits.
constexpr std::string_view kSpecial = "\nNJ\x0e/09:@AFG`afg \t\0\xb0\xc1\xe1\xff"sv;

TEST(TextScanPaths, AgreeOnEachByteAtEachOffsetOfEveryLength) {
  // Lengths 0..80 cover every distance to the text's end around the 16-byte steps and the
  // 64-byte blocks (which need 64 bytes left), so walks start only at the text's start; one
  // special byte at each offset, among bytes that are digits or not.
  for (const char filler : {'x', '7'}) {
    for (size_t length = 0; length <= 80; ++length) {
      for (size_t at = 0; at < length; ++at) {
        for (const char c : kSpecial) {
          std::string text(length, filler);
          text[at] = c;
          ASSERT_TRUE(same_scans(text, 1))
              << "length " << length << ", byte " << static_cast<int>(static_cast<uint8_t>(c))
              << " at " << at << ", filler " << filler;
        }
      }
    }
  }
}

TEST(TextScanPaths, AgreeOnLinesAcrossBlocks) {
  // Lines of every length up to past a block, with an N at the start, middle or end of each
  // or none, over several blocks: lines that end in, at the edge of and past a 16- and a 64-byte
  // block, with the text's last bytes taken a byte at a time.
  for (size_t line_length = 1; line_length <= 70; ++line_length) {
    // Line lengths count the newline; SIZE_MAX: no N.
    for (const size_t n_at : {size_t{0}, line_length / 2, line_length - 2, SIZE_MAX}) {
      std::string line(line_length - 1, 'x');
      if (n_at < line.size()) line[n_at] = 'N';
      line += '\n';
      std::string text;
      while (text.size() < 200) text += line;
      for (const size_t cut : {size_t{0}, size_t{1}, line_length / 2}) {
        ASSERT_TRUE(same_scans(std::string_view(text).substr(0, text.size() - cut), kWalkStarts))
            << "line length " << line_length << ", N at " << n_at << ", cut " << cut;
      }
    }
  }
}

TEST(TextScanPaths, AgreeOnRandomMixes) {
  // Dense mixes of the special bytes, for what the cases above do not combine: several Ns and
  // decoys in one block, newlines in a row, digit runs broken anywhere.
  std::mt19937_64 rng(11);
  for (int round = 0; round < 1500; ++round) {
    std::string text(rng() % 300, 'x');
    const int spread = 1 + static_cast<int>(rng() % 4);  // how often a byte is special
    for (char& c : text) {
      if (static_cast<int>(rng() % 4) < spread) c = kSpecial[rng() % kSpecial.size()];
    }
    ASSERT_TRUE(same_scans(text, kWalkStarts)) << "round " << round;
  }
}

TEST(TextScanPaths, MasksAgreeOnEveryByteInEveryLane) {
  // Fillers: a digit, a non-hex letter, hex letters of both cases, a high-bit byte.
  for (const char filler : {'0', 'x', 'f', 'F', '\xb9'}) {
    for (int lane = 0; lane < 16; ++lane) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string bytes(16, filler);
        bytes[static_cast<size_t>(lane)] = static_cast<char>(byte);
        const Text t(bytes);
        ASSERT_EQ(scalar::decimal_mask16(t.begin()), sse2::decimal_mask16(t.begin()))
            << "byte " << byte << " in lane " << lane << ", filler "
            << static_cast<int>(static_cast<uint8_t>(filler));
        ASSERT_EQ(scalar::hex_mask16(t.begin()), sse2::hex_mask16(t.begin()))
            << "byte " << byte << " in lane " << lane << ", filler "
            << static_cast<int>(static_cast<uint8_t>(filler));
      }
    }
  }
}

#else

TEST(TextScanPaths, NeedsSse2) {
  GTEST_SKIP() << "this target builds only the scalar path: nothing to compare it with";
}

#endif

}  // namespace
}  // namespace collide::traces::nccl
