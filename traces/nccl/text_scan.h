#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "traces/nccl/text_scan_common.h"

// The scans that read 16 or 64 bytes at a time where SSE2 allows (every x86-64) and a byte at a
// time elsewhere, picked here at compile time: the parser's calls inline as they would without
// the choice, no pointer to a function between. Both paths, whole, in their own headers:
//   scan_line(p, end)       the line from p: its end and its capital Ns (LineScan)
//   LineFinder(end).next(p) scan_line for consecutive lines of one text
//   decimal_mask16(q)       bit i: q[i] is a decimal digit, for the 16 readable bytes at q
//   hex_mask16(q)           bit i: q[i] is a hex digit
// text_scan_scalar.h is the reference that text_scan_sse2.h must agree with (text_scan_test.cc).
#if defined(__SSE2__)
#include "traces/nccl/text_scan_sse2.h"
namespace collide::traces::nccl {
namespace scan_path = sse2;
}
#else
#include "traces/nccl/text_scan_scalar.h"
namespace collide::traces::nccl {
namespace scan_path = scalar;
}
#endif

// Hand-written field scanning over a byte range, for the NCCL log parser's hot path: no
// allocation, no locale, no regex. Every function leaves the cursor where it was on failure.
namespace collide::traces::nccl {

using scan_path::decimal_mask16;
using scan_path::hex_mask16;
using scan_path::LineFinder;
using scan_path::scan_line;

struct Cursor {
  const char* p;
  const char* end;

  bool done() const { return p >= end; }
  size_t left() const { return static_cast<size_t>(end - p); }
  std::string_view rest() const { return {p, left()}; }
};

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
