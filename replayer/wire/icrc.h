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

}  // namespace collide::replayer::wire
