#pragma once

#include <cstdint>

// What the scalar and the SSE2 line scans (text_scan_scalar.h, text_scan_sse2.h) both use: their
// result and the byte classes. text_scan.h is the header to include.
namespace collide::traces::nccl {

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

// One line of a text: where it ends (its newline, or the text's end) and its capital Ns, which
// every NCCL message marker ("NCCL ") starts with.
struct LineScan {
  const char* end;
  const char* first_capital;  // the first N, nullptr if none
  // How many Ns: exact up to three, which is all callers tell apart; at least three above (the
  // SSE2 scan counts at most three per 16 bytes).
  unsigned capitals;
};

}  // namespace collide::traces::nccl
