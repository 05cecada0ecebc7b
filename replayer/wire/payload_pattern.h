#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

// A payload pattern that proves byte-exact delivery and whose CRC the sender gets without reading
// it. Word i (64 bits, little-endian) of a payload is seed XOR (i + 1) * golden-ratio constant: a
// fixed sequence that differs at every position, masked by a seed that differs for every packet.
// A word that lands in the wrong place or the wrong packet no longer matches.
//
// Because the seed enters by XOR only, the payload's CRC-32 is the CRC of the seedless sequence
// (a constant per length) XOR a linear function of the 64 seed bits (eight table lookups per
// length). The CRC thus costs the same for 64 bytes and for 4096.
namespace collide::replayer::wire {

void fill_payload_pattern(std::span<uint8_t> payload, uint64_t seed);
bool payload_matches_pattern(std::span<const uint8_t> payload, uint64_t seed);

// crc32 (zlib's convention) of `filled`, which holds fill_payload_pattern(seed) output. Lengths
// seen often get their tables (8 KiB each, per thread) and are then not read at all; the first
// uses of a length read `filled` in full, so one-off lengths (a message's last packet) cost no
// table build.
uint32_t payload_pattern_crc(std::span<const uint8_t> filled, uint64_t seed);

}  // namespace collide::replayer::wire
