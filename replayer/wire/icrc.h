#pragma once

#include <cstdint>
#include <span>

namespace collide::replayer::wire {

// The RoCEv2 invariant CRC of one packet. `ip_packet` starts at the IPv4 or IPv6 header and ends
// where the ICRC goes (after the payload and its pad). The CRC-32 runs over 8 bytes of 0xff (the
// masked LRH), the IP header with its variant fields set to ones (IPv4: TOS, TTL, checksum;
// IPv6: traffic class, flow label, hop limit), the UDP header with its checksum set to ones, the
// BTH with its FECN/BECN/reserved byte set to ones, then the rest as it is.
// Returns the CRC as a number; on the wire it is stored little-endian (store_le32).
uint32_t compute_icrc(std::span<const uint8_t> ip_packet);

// The same ICRC for a sender that knows its payload's CRC without reading the payload (a
// constant, or a pattern linear in its seed): `ip_headers` runs from the IP header through the
// last transport header (BTH and any RETH/AETH); `payload_crc` is crc32 (zlib's convention) of
// the `payload_len` bytes that follow, pad included. Costs the headers only.
uint32_t compute_icrc_from_payload_crc(std::span<const uint8_t> ip_headers, uint32_t payload_crc,
                                       size_t payload_len);

}  // namespace collide::replayer::wire
