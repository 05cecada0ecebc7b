#include "replayer/wire/icrc.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace collide::replayer::wire {
namespace {

constexpr size_t kUdpHeaderSize = 8;
constexpr size_t kBthSize = 12;
constexpr size_t kIpv6HeaderSize = 40;
// Largest header run we copy to mask: IPv6 + UDP + BTH.
constexpr size_t kMaxMaskedSize = kIpv6HeaderSize + kUdpHeaderSize + kBthSize;

// Sets the variant fields of a copied IP header to ones; returns the IP header length.
size_t mask_ip_header(uint8_t* ip) {
  const uint8_t version = ip[0] >> 4;
  if (version == 6) {
    ip[0] |= 0x0f;  // traffic class (high nibble) ...
    ip[1] = 0xff;   // ... traffic class (low nibble) and flow label
    ip[2] = 0xff;
    ip[3] = 0xff;
    ip[7] = 0xff;  // hop limit
    return kIpv6HeaderSize;
  }
  ip[1] = 0xff;   // TOS (DSCP and ECN)
  ip[8] = 0xff;   // TTL
  ip[10] = 0xff;  // header checksum
  ip[11] = 0xff;
  return static_cast<size_t>(ip[0] & 0x0f) * 4;
}

}  // namespace

uint32_t compute_icrc(std::span<const uint8_t> ip_packet) {
  static const std::array<uint8_t, 8> kMaskedLrh = {0xff, 0xff, 0xff, 0xff,
                                                    0xff, 0xff, 0xff, 0xff};
  // The copy holds the IP header (up to IPv4 with options or IPv6), UDP and BTH.
  std::array<uint8_t, 60 + kUdpHeaderSize + kBthSize> masked{};
  static_assert(sizeof(masked) >= kMaxMaskedSize);

  const size_t copy_len = std::min(ip_packet.size(), masked.size());
  std::memcpy(masked.data(), ip_packet.data(), copy_len);
  const size_t ip_len = mask_ip_header(masked.data());
  const size_t headers_len = ip_len + kUdpHeaderSize + kBthSize;
  if (headers_len > ip_packet.size()) return 0;  // too short to be RoCEv2; callers check sizes

  uint8_t* udp = masked.data() + ip_len;
  udp[6] = 0xff;  // UDP checksum
  udp[7] = 0xff;
  uint8_t* bth = udp + kUdpHeaderSize;
  bth[4] = 0xff;  // FECN, BECN and reserved bits

  uLong crc = crc32(0L, kMaskedLrh.data(), kMaskedLrh.size());
  crc = crc32(crc, masked.data(), static_cast<uInt>(headers_len));
  crc = crc32(crc, ip_packet.data() + headers_len,
              static_cast<uInt>(ip_packet.size() - headers_len));
  return static_cast<uint32_t>(crc);
}

}  // namespace collide::replayer::wire
