#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

// CRC-32 as Ethernet and the RoCEv2 ICRC use it, in zlib's convention (crc32(0, data, len)).
//
// Two things make a sender's ICRC cheap. Short runs (the ~60 bytes of headers) go through
// slicing-by-8 tables, several times faster than zlib on such lengths. And CRC-32 is linear over
// GF(2), so the CRC of a concatenation follows from the CRCs of its parts: a sender whose payload
// is a constant or a pattern it can summarise never reads the payload to checksum it.
namespace collide::replayer::wire {

// crc32 continued over `bytes` from `crc` (0 to start).
uint32_t crc32_update(uint32_t crc, std::span<const uint8_t> bytes);
inline uint32_t crc32_of(std::span<const uint8_t> bytes) { return crc32_update(0, bytes); }

// Appending `len` bytes to a message, as a linear map on its CRC (multiplication by x^(8 len)
// mod P): crc32(a || b) = apply(crc32(a)) ^ crc32(b) for any b of that length. Four tables of
// 256 entries (4 KiB), built once; applying costs four lookups. A sender keeps one for the
// payload length it sends most (its MTU).
class Crc32Shift {
 public:
  explicit Crc32Shift(size_t len);

  size_t length() const { return len_; }
  uint32_t apply(uint32_t crc) const {
    return by_byte_[0][crc & 0xff] ^ by_byte_[1][(crc >> 8) & 0xff] ^
           by_byte_[2][(crc >> 16) & 0xff] ^ by_byte_[3][crc >> 24];
  }
  uint32_t concat(uint32_t crc_a, uint32_t crc_b) const { return apply(crc_a) ^ crc_b; }
  // crc32 of `length()` zero bytes.
  uint32_t zeros_crc() const { return zeros_crc_; }

 private:
  size_t len_;
  uint32_t zeros_crc_ = 0;
  std::array<std::array<uint32_t, 256>, 4> by_byte_{};
};

// crc32(a || b) from crc32(a), crc32(b) and the length of b. The operator for a length is built
// on first use and cached per thread (a few lengths in use at a time: a QP's MTU, a message's
// last packet), then costs four table lookups.
uint32_t crc32_concat(uint32_t crc_a, uint32_t crc_b, size_t len_b);

// crc32 of `len` zero bytes, without reading any.
uint32_t crc32_of_zeros(size_t len);

// What one byte contributes to the CRC register, by value, when `bytes_after` more bytes follow
// it in a message of fixed length. CRC-32 is affine in its input: flipping byte i of a message by
// d changes the (unfinalised) register at the end by this term of d, whatever the other bytes
// are. A sender whose header differs from a fixed template in a few bytes gets the header's CRC
// from the template's and one lookup per differing byte, without reading the header.
using Crc32ByteTerms = std::array<uint32_t, 256>;
Crc32ByteTerms crc32_byte_terms(size_t bytes_after);

}  // namespace collide::replayer::wire
