#pragma once

#include "traces/nccl/text_scan_common.h"

// The line and digit scans a byte at a time: what text_scan.h uses where SSE2 is missing, and the
// reference that the SSE2 path (text_scan_sse2.h) must agree with (text_scan_test.cc checks).
// Written for plainness, not speed.
namespace collide::traces::nccl::scalar {

// From `p` to the next newline (or `end`), with the capital Ns before it.
inline LineScan scan_line(const char* p, const char* end) {
  LineScan scan{end, nullptr, 0};
  for (; p < end; ++p) {
    if (*p == '\n') {
      scan.end = p;
      return scan;
    }
    if (*p == 'N') {
      if (scan.first_capital == nullptr) scan.first_capital = p;
      ++scan.capitals;
    }
  }
  return scan;
}

// scan_line for consecutive lines of one text; `p` may skip lines.
class LineFinder {
 public:
  explicit LineFinder(const char* end) : end_(end) {}

  LineScan next(const char* p) { return scan_line(p, end_); }

 private:
  const char* end_;
};

// Bit i set when q[i] is a decimal digit, for the 16 bytes at q.
inline unsigned decimal_mask16(const char* q) {
  unsigned mask = 0;
  for (unsigned i = 0; i < 16; ++i) mask |= static_cast<unsigned>(is_digit(q[i])) << i;
  return mask;
}

// Bit i set when q[i] is a hex digit (either case), for the 16 bytes at q.
inline unsigned hex_mask16(const char* q) {
  unsigned mask = 0;
  for (unsigned i = 0; i < 16; ++i) mask |= static_cast<unsigned>(hex_value(q[i]) >= 0) << i;
  return mask;
}

}  // namespace collide::traces::nccl::scalar
