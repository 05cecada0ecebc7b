#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

// Hand-written field scanning over a byte range, for the NCCL log parser's hot path: no
// allocation, no locale, no regex. Every function leaves the cursor where it was on failure.
namespace collide::traces::nccl {

struct Cursor {
  const char* p;
  const char* end;

  bool done() const { return p >= end; }
  size_t left() const { return static_cast<size_t>(end - p); }
  std::string_view rest() const { return {p, left()}; }
};

inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Hex digit values, -1 for anything else; a table because pointers are most of a COLL line.
struct HexTable {
  int8_t value[256];
  constexpr HexTable() : value() {
    for (int i = 0; i < 256; ++i) value[i] = -1;
    for (int i = 0; i < 10; ++i) value['0' + i] = static_cast<int8_t>(i);
    for (int i = 0; i < 6; ++i) {
      value['a' + i] = static_cast<int8_t>(10 + i);
      value['A' + i] = static_cast<int8_t>(10 + i);
    }
  }
};
inline constexpr HexTable kHexTable;

inline int hex_value(char c) {
  return kHexTable.value[static_cast<uint8_t>(c)];
}

inline void skip_spaces(Cursor& c) {
  while (c.p < c.end && (*c.p == ' ' || *c.p == '\t')) ++c.p;
}

// Consumes `word` if the cursor starts with it.
inline bool consume(Cursor& c, std::string_view word) {
  if (c.left() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (c.p[i] != word[i]) return false;
  }
  c.p += word.size();
  return true;
}

// Skips spaces, then consumes `word` followed by a space or the end.
inline bool consume_word(Cursor& c, std::string_view word) {
  Cursor t = c;
  skip_spaces(t);
  if (!consume(t, word)) return false;
  if (!t.done() && *t.p != ' ' && *t.p != '\t') return false;
  c = t;
  return true;
}

// A decimal number; more than 19 digits is an overflow and fails.
inline bool parse_u64(Cursor& c, uint64_t& out) {
  const char* p = c.p;
  uint64_t v = 0;
  int digits = 0;
  while (p < c.end && is_digit(*p)) {
    if (++digits > 19) return false;
    v = v * 10 + static_cast<uint64_t>(*p - '0');
    ++p;
  }
  if (digits == 0) return false;
  c.p = p;
  out = v;
  return true;
}

inline bool parse_i64(Cursor& c, int64_t& out) {
  Cursor t = c;
  const bool negative = !t.done() && *t.p == '-';
  if (negative) ++t.p;
  uint64_t v = 0;
  if (!parse_u64(t, v) || v > static_cast<uint64_t>(INT64_MAX)) return false;
  out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  c = t;
  return true;
}

// An int that must fit in 32 bits.
inline bool parse_i32(Cursor& c, int32_t& out) {
  Cursor t = c;
  int64_t v = 0;
  if (!parse_i64(t, v) || v < INT32_MIN || v > INT32_MAX) return false;
  out = static_cast<int32_t>(v);
  c = t;
  return true;
}

// Hex digits without a prefix (NCCL's opCount); at most 16 of them.
inline bool parse_hex(Cursor& c, uint64_t& out) {
  const char* p = c.p;
  uint64_t v = 0;
  int digits = 0;
  while (p < c.end) {
    const int h = hex_value(*p);
    if (h < 0) break;
    if (++digits > 16) return false;
    v = (v << 4) | static_cast<uint64_t>(h);
    ++p;
  }
  if (digits == 0) return false;
  c.p = p;
  out = v;
  return true;
}

// A pointer as printf's %p prints it: "0x..." or "(nil)" (0). Also takes "0" and "nil".
inline bool parse_pointer(Cursor& c, uint64_t& out) {
  Cursor t = c;
  if (consume(t, "(nil)") || consume(t, "nil")) {
    out = 0;
    c = t;
    return true;
  }
  if (consume(t, "0x") || consume(t, "0X")) {
    if (!parse_hex(t, out)) return false;
    c = t;
    return true;
  }
  if (consume(t, "0") && (t.done() || *t.p == ' ')) {
    out = 0;
    c = t;
    return true;
  }
  return false;
}

// The next run of non-space characters (empty at the end).
inline std::string_view next_token(Cursor& c) {
  skip_spaces(c);
  const char* s = c.p;
  while (c.p < c.end && *c.p != ' ' && *c.p != '\t') ++c.p;
  return {s, static_cast<size_t>(c.p - s)};
}

// Skips a pointer without reading its value; true if it was "(nil)" (or 0).
inline bool skip_pointer(Cursor& c, bool& null) {
  const char* s = c.p;
  while (c.p < c.end && *c.p != ' ' && *c.p != '\t') ++c.p;
  const std::string_view token(s, static_cast<size_t>(c.p - s));
  if (token.empty()) return false;
  null =
      token.size() <= 5 && (token == "(nil)" || token == "nil" || token == "0" || token == "0x0");
  return true;
}

// Finds "NCCL " in [p, end): by the rare capital N, which a COLL line holds only there.
inline const char* find_nccl(const char* p, const char* end) {
  while (p + 5 <= end) {
    const void* hit = std::memchr(p, 'N', static_cast<size_t>(end - p - 4));
    if (hit == nullptr) return nullptr;
    const char* n = static_cast<const char*>(hit);
    if (n[1] == 'C' && n[2] == 'C' && n[3] == 'L' && n[4] == ' ') return n;
    p = n + 1;
  }
  return nullptr;
}

// One line of a text: where it ends (its newline, or the text's end) and its capital Ns, which
// every NCCL message marker ("NCCL ") starts with.
struct LineScan {
  const char* end;
  const char* first_capital;  // the first N, nullptr if none
  unsigned capitals;          // how many Ns: exact up to 3
};

// Scans from `p` to the next newline once, for both the newline and the Ns: this runs for every
// line of a big log, where two memchr calls (newline, then N) cost twice the reading and a call.
inline LineScan scan_line(const char* p, const char* end) {
  LineScan scan{end, nullptr, 0};
  // Counted exactly up to three per 16 bytes, which is all callers tell apart (a popcount is a
  // library call on baseline x86-64).
  auto note = [&scan](const char* at, unsigned count) {
    if (scan.first_capital == nullptr) scan.first_capital = at;
    scan.capitals += count;
  };
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i capital = _mm_set1_epi8('N');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const auto newlines = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)));
    auto capitals = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, capital)));
    if ((newlines | capitals) != 0) {
      // Only the Ns before the newline belong to this line.
      if (newlines != 0) capitals &= (newlines & (0u - newlines)) - 1;
      if (capitals != 0) {
        const unsigned second = capitals & (capitals - 1);
        const unsigned third = second & (second - 1);
        note(p + __builtin_ctz(capitals), 1u + (second != 0) + (third != 0));
      }
      if (newlines != 0) {
        scan.end = p + __builtin_ctz(newlines);
        return scan;
      }
    }
    p += 16;
  }
#endif
  for (; p < end; ++p) {
    if (*p == '\n') {
      scan.end = p;
      return scan;
    }
    if (*p == 'N') note(p, 1);
  }
  return scan;
}

// scan_line for consecutive lines: where a 64-byte block holds a newline or an N is found once
// per block, and kept for the lines that follow in the same block, where scan_line compares every
// line's bytes afresh (and its loop exits at a different point on every line, a misprediction
// each). Gives what scan_line gives, for any `p` (a line may be skipped).
class LineFinder {
 public:
  explicit LineFinder(const char* end) : end_(end) {}

  LineScan next(const char* p) {
#if defined(__SSE2__)
    if (p < block_ || p >= block_ + 64) {
      if (end_ - p < 64) return scan_line(p, end_);
      load(p);
    }
    LineScan scan{end_, nullptr, 0};
    uint64_t marks = marks_ & (~uint64_t{0} << (p - block_));
    while (true) {
      // A few marks per line: the Ns of its "NCCL INFO", its newline.
      for (; marks != 0; marks &= marks - 1) {
        const char* at = block_ + __builtin_ctzll(marks);
        if (*at == '\n') {
          scan.end = at;
          return scan;
        }
        if (*at == 'N') {
          if (scan.first_capital == nullptr) scan.first_capital = at;
          ++scan.capitals;
        }
      }
      const char* next_block = block_ + 64;
      if (end_ - next_block < 64) {
        // The text's last bytes: the rest of the line a byte at a time.
        const LineScan rest = scan_line(next_block, end_);
        if (scan.first_capital == nullptr) scan.first_capital = rest.first_capital;
        scan.capitals += rest.capitals;
        scan.end = rest.end;
        block_ = nullptr;
        return scan;
      }
      load(next_block);
      marks = marks_;
    }
#else
    return scan_line(p, end_);
#endif
  }

 private:
#if defined(__SSE2__)
  void load(const char* at) {
    block_ = at;
    // The text is read once, front to back, mostly from memory: ask for it a few lines ahead,
    // also across page boundaries, where the hardware's own prefetching stops.
    _mm_prefetch(at + kPrefetchAhead, _MM_HINT_T0);
    // One compare finds both: setting bits 0x44 turns '\n' (0x0A) and 'N' (0x4E) into 0x4E, and
    // only two other bytes ('J' and 0x0E), which next() then passes over.
    const __m128i fold = _mm_set1_epi8(0x44);
    const __m128i mark = _mm_set1_epi8(0x4E);
    marks_ = 0;
    for (int i = 0; i < 4; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 16 * i));
      const auto bits =
          static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_or_si128(v, fold), mark)));
      marks_ |= static_cast<uint64_t>(bits) << (16 * i);
    }
  }

  static constexpr int kPrefetchAhead = 1024;
  const char* block_ = nullptr;  // 64 readable bytes, or nullptr
  uint64_t marks_ = 0;           // bit i: block_[i] may be a newline or an N
#endif
  const char* end_;
};

// Word-at-a-time number reading for the collective fast path. Fields there are short runs of
// digits of varying length (opCount, count, comm); a byte loop mispredicts its exit once per
// field, while a 16-byte compare finds the run's length and a few multiplies convert it. These
// read whole words (8 or 16 bytes) at `q`, also past the number: callers check that the bytes
// are readable and fall back to the byte loops otherwise.

inline uint64_t load_u64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

#if defined(__SSE2__)
// Bit i set when q[i] is a decimal digit, for the 16 bytes at q.
inline unsigned decimal_mask16(const char* q) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  // Subtracting '0' + 128 (wrapping) moves '0'..'9' to -128..-119 and everything else above:
  // one signed compare then tells digits apart (SSE2 has no unsigned byte compare).
  const __m128i shifted = _mm_sub_epi8(v, _mm_set1_epi8(static_cast<char>('0' + 128)));
  return static_cast<unsigned>(
      _mm_movemask_epi8(_mm_cmplt_epi8(shifted, _mm_set1_epi8(static_cast<char>(-128 + 10)))));
}

// Bit i set when q[i] is a hex digit (either case), for the 16 bytes at q.
inline unsigned hex_mask16(const char* q) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  // Setting bit 5 folds 'A'..'F' onto 'a'..'f' and leaves '0'..'9' as they are; no other byte
  // lands on a letter from a to f.
  const __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
  const __m128i letter =
      _mm_cmplt_epi8(_mm_sub_epi8(lower, _mm_set1_epi8(static_cast<char>('a' + 128))),
                     _mm_set1_epi8(static_cast<char>(-128 + 6)));
  return decimal_mask16(q) | static_cast<unsigned>(_mm_movemask_epi8(letter));
}
#endif

// How many of the 16 bytes at the mask's start are set before the first clear one (16 if all).
inline unsigned leading_run(unsigned mask16) {
  return static_cast<unsigned>(__builtin_ctz(~mask16 | 0x10000u));
}

// The value of the `n` (1 to 8) decimal digits at q, which has 8 readable bytes.
[[gnu::always_inline]] inline uint64_t decimal_value8(const char* q, unsigned n) {
  // Digit values, the first digit in the lowest byte. Shifting the n digits to the top of the
  // word puts zeros in front of them, so the number reads as 8 digits with leading zeros.
  uint64_t x = (load_u64(q) - 0x3030303030303030ull) << (8 * (8 - n));
  // Pairs of digits, then pairs of pairs: in each lane the lower half holds the more significant
  // part, and no step carries out of its lane (99, 9999, 99999999 fit).
  x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFull;
  x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFull;
  return (x * 10000 + (x >> 32)) & 0xFFFFFFFFull;
}

// The value of the `n` (1 to 8) hex digits at q, which has 8 readable bytes.
[[gnu::always_inline]] inline uint64_t hex_value8(const char* q, unsigned n) {
  const uint64_t bytes = load_u64(q);
  // A digit's low nibble is its value; a letter (bit 6 set) has its value minus 9 there.
  uint64_t x = (bytes & 0x0F0F0F0F0F0F0F0Full) + ((bytes >> 6) & 0x0101010101010101ull) * 9;
  x <<= 8 * (8 - n);
  x = ((x << 4) + (x >> 8)) & 0x00FF00FF00FF00FFull;
  x = ((x << 8) + (x >> 16)) & 0x0000FFFF0000FFFFull;
  return ((x << 16) + (x >> 32)) & 0xFFFFFFFFull;
}

// Finds `needle` in [p, end); nullptr when absent.
inline const char* find(const char* p, const char* end, std::string_view needle) {
  if (p >= end || needle.empty()) return nullptr;
  const void* hit = memmem(p, static_cast<size_t>(end - p), needle.data(), needle.size());
  return static_cast<const char*>(hit);
}

}  // namespace collide::traces::nccl
