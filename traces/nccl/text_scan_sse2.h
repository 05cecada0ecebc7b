#pragma once

#if !defined(__SSE2__)
#error "text_scan_sse2.h needs SSE2; include text_scan.h, which picks the scalar path without it"
#endif

#include <emmintrin.h>
#include <xmmintrin.h>

#include <cstdint>

#include "traces/nccl/text_scan_common.h"

// The line and digit scans 16 or 64 bytes at a time, for x86-64 (where SSE2 is always there).
// Each gives what its byte-at-a-time reference in text_scan_scalar.h gives (text_scan_test.cc
// checks); text_scan.h picks this path at compile time.
namespace collide::traces::nccl::sse2 {

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
  // Fewer than 16 bytes left: a byte at a time, so nothing past `end` is read.
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
  }

 private:
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
  const char* end_;
};

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

}  // namespace collide::traces::nccl::sse2
