#pragma once

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

// crc32(a || b) from crc32(a), crc32(b) and the length of b. The operator for a length is built
// on first use and cached per thread (a few lengths in use at a time: a QP's MTU, a message's
// last packet), then costs four table lookups.
uint32_t crc32_concat(uint32_t crc_a, uint32_t crc_b, size_t len_b);

// crc32 of `len` zero bytes, without reading any.
uint32_t crc32_of_zeros(size_t len);

}  // namespace collide::replayer::wire
