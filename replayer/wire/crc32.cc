#include "replayer/wire/crc32.h"

#include <zlib.h>

#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <optional>

namespace collide::replayer::wire {
namespace {

constexpr uint32_t kReflectedPolynomial = 0xedb88320u;
// Below this, slicing-by-8 beats zlib; above, zlib's braided loop is as fast or faster.
constexpr size_t kTablesUpTo = 256;

using SliceTables = std::array<std::array<uint32_t, 256>, 8>;

constexpr SliceTables make_slice_tables() {
  SliceTables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kReflectedPolynomial : c >> 1;
    t[0][b] = c;
  }
  for (size_t j = 1; j < 8; ++j) {
    for (size_t b = 0; b < 256; ++b) t[j][b] = (t[j - 1][b] >> 8) ^ t[0][t[j - 1][b] & 0xff];
  }
  return t;
}

constexpr SliceTables kSlice = make_slice_tables();

uint32_t slice_by_8(uint32_t crc, const uint8_t* p, size_t len) {
  uint32_t c = ~crc;
  if constexpr (std::endian::native == std::endian::little) {
    for (; len >= 8; len -= 8, p += 8) {
      uint32_t lo;
      uint32_t hi;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + 4, 4);
      lo ^= c;
      c = kSlice[7][lo & 0xff] ^ kSlice[6][(lo >> 8) & 0xff] ^ kSlice[5][(lo >> 16) & 0xff] ^
          kSlice[4][lo >> 24] ^ kSlice[3][hi & 0xff] ^ kSlice[2][(hi >> 8) & 0xff] ^
          kSlice[1][(hi >> 16) & 0xff] ^ kSlice[0][hi >> 24];
    }
    // A header's varying tail is often a single word (AckReq and PSN): one step, not four.
    if (len >= 4) {
      uint32_t w;
      std::memcpy(&w, p, 4);
      w ^= c;
      c = kSlice[3][w & 0xff] ^ kSlice[2][(w >> 8) & 0xff] ^ kSlice[1][(w >> 16) & 0xff] ^
          kSlice[0][w >> 24];
      len -= 4;
      p += 4;
    }
  }
  for (; len > 0; --len, ++p) c = (c >> 8) ^ kSlice[0][(c ^ *p) & 0xff];
  return ~c;
}

constexpr size_t kCacheSlots = 16;

const Crc32Shift& shift_operator(size_t len) {
  // 64 KiB of tables per thread, on the heap: static thread-local storage comes out of every
  // thread's stack, and a library may start threads with small stacks.
  using Cache = std::array<std::optional<Crc32Shift>, kCacheSlots>;
  thread_local std::unique_ptr<Cache> cache;
  if (!cache) cache = std::make_unique<Cache>();
  // Fibonacci hashing spreads the typical lengths (powers of two, MTU multiples) over the slots.
  const size_t slot = static_cast<size_t>((uint64_t{len} * 0x9e3779b97f4a7c15ull) >> 60);
  std::optional<Crc32Shift>& s = (*cache)[slot];
  if (!s || s->length() != len) s.emplace(len);
  return *s;
}

}  // namespace

Crc32Shift::Crc32Shift(size_t len) : len_(len) {
  // zlib builds the operator as a polynomial; its images of the 32 register bits give the tables.
  const uLong op = crc32_combine_gen(static_cast<z_off_t>(len));
  std::array<uint32_t, 32> column{};
  for (size_t bit = 0; bit < 32; ++bit) {
    column[bit] = static_cast<uint32_t>(crc32_combine_op(uLong{1} << bit, 0, op));
  }
  for (size_t j = 0; j < 4; ++j) {
    auto& table = by_byte_[j];
    table[0] = 0;
    for (unsigned b = 1; b < 256; ++b) {
      table[b] = table[b & (b - 1)] ^ column[8 * j + static_cast<size_t>(std::countr_zero(b))];
    }
  }
  // crc32 pre- and post-inverts its register and zeros only shift it: the CRC of `len` zeros is
  // the shifted all-ones register, inverted.
  zeros_crc_ = ~apply(0xffffffffu);
}

uint32_t crc32_update(uint32_t crc, std::span<const uint8_t> bytes) {
  if (bytes.size() <= kTablesUpTo) return slice_by_8(crc, bytes.data(), bytes.size());
  return static_cast<uint32_t>(crc32_z(crc, bytes.data(), bytes.size()));
}

uint32_t crc32_concat(uint32_t crc_a, uint32_t crc_b, size_t len_b) {
  if (len_b == 0) return crc_a;
  return shift_operator(len_b).concat(crc_a, crc_b);
}

uint32_t crc32_of_zeros(size_t len) { return len == 0 ? 0 : shift_operator(len).zeros_crc(); }

Crc32ByteTerms crc32_byte_terms(size_t bytes_after) {
  Crc32ByteTerms terms{};
  // From a zero register, byte d leaves table[d]; each byte after it (zeros: the difference of
  // two messages is zero elsewhere) shifts the register once more.
  const Crc32Shift shift(bytes_after);
  for (size_t d = 0; d < 256; ++d) {
    terms[d] = bytes_after == 0 ? kSlice[0][d] : shift.apply(kSlice[0][d]);
  }
  return terms;
}

}  // namespace collide::replayer::wire
