#include "replayer/wire/icrc.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "replayer/wire/crc32.h"

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

// The CRC state after the eight 0xff bytes that stand for the LRH: the same for every packet.
uint32_t crc_after_masked_lrh() {
  static const uint32_t crc = [] {
    const std::array<uint8_t, 8> ones = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    return crc32_of(ones);
  }();
  return crc;
}

// The headers of a QP's packets differ, from one to the next, only from BTH byte 8 on (AckReq,
// PSN, then RETH or AETH): IP, UDP and the first BTH word are the same for every full-size packet
// of a QP. The CRC state after that prefix is remembered per thread for a few recent prefixes,
// so a sender checksums a dozen header bytes per packet instead of ~60.
constexpr size_t kBthVaryingFrom = 8;
constexpr size_t kMaxPrefix = 60 + kUdpHeaderSize + kBthVaryingFrom;
constexpr size_t kPrefixSlots = 16;

struct PrefixState {
  size_t len = 0;
  std::array<uint8_t, kMaxPrefix> bytes{};
  uint32_t crc = 0;
};

uint32_t crc_after_prefix(const uint8_t* masked, size_t len) {
  thread_local std::array<PrefixState, kPrefixSlots> slots;
  // Destination QP and address pick the slot: a sender's QPs differ there.
  const size_t slot = (masked[len - 1] ^ masked[len - 2] * 7u ^ masked[len - 3] * 31u ^
                       masked[len - kUdpHeaderSize - kBthVaryingFrom - 1] * 131u) %
                      kPrefixSlots;
  PrefixState& s = slots[slot];
  if (s.len == len && std::memcmp(s.bytes.data(), masked, len) == 0) return s.crc;
  s.len = len;
  std::memcpy(s.bytes.data(), masked, len);
  s.crc = crc32_update(crc_after_masked_lrh(), {masked, len});
  return s.crc;
}

// crc32 of the masked pseudo-header (LRH of ones, masked IP, UDP and BTH) followed by the rest of
// `ip_packet`. Returns 0 for spans too short to be RoCEv2 (callers check sizes).
uint32_t masked_crc(std::span<const uint8_t> ip_packet, bool remember_prefix) {
  if (ip_packet.size() < 20 + kUdpHeaderSize + kBthSize) return 0;
  // The copy holds the IP header (up to IPv4 with options or IPv6), UDP and BTH. Only what was
  // copied is read: no need to clear the rest.
  std::array<uint8_t, 60 + kUdpHeaderSize + kBthSize> masked;
  static_assert(sizeof(masked) >= kMaxMaskedSize);

  constexpr size_t kPlainIpv4Headers = 20 + kUdpHeaderSize + kBthSize;
  if (ip_packet[0] == 0x45) {
    // IPv4 without options, what every sender here writes: a copy of constant size compiles to
    // a few vector moves rather than a string copy that costs more than the CRC it feeds.
    std::memcpy(masked.data(), ip_packet.data(), kPlainIpv4Headers);
  } else {
    std::memcpy(masked.data(), ip_packet.data(), std::min(ip_packet.size(), masked.size()));
  }
  const size_t ip_len = mask_ip_header(masked.data());
  const size_t headers_len = ip_len + kUdpHeaderSize + kBthSize;
  if (ip_len < 20 || headers_len > ip_packet.size()) return 0;

  uint8_t* udp = masked.data() + ip_len;
  udp[6] = 0xff;  // UDP checksum
  udp[7] = 0xff;
  uint8_t* bth = udp + kUdpHeaderSize;
  bth[4] = 0xff;  // FECN, BECN and reserved bits

  const size_t prefix_len = ip_len + kUdpHeaderSize + kBthVaryingFrom;
  const uint32_t after_prefix =
      remember_prefix ? crc_after_prefix(masked.data(), prefix_len)
                      : crc32_update(crc_after_masked_lrh(), {masked.data(), prefix_len});
  const uint32_t crc =
      crc32_update(after_prefix, {masked.data() + prefix_len, headers_len - prefix_len});
  return crc32_update(crc, ip_packet.subspan(headers_len));
}

}  // namespace

// Receivers see packets of many senders and QPs: the cache would only churn for them.
uint32_t compute_icrc(std::span<const uint8_t> ip_packet) { return masked_crc(ip_packet, false); }

uint32_t compute_icrc_from_payload_crc(std::span<const uint8_t> ip_headers, uint32_t payload_crc,
                                       size_t payload_len) {
  return crc32_concat(masked_crc(ip_headers, true), payload_crc, payload_len);
}

}  // namespace collide::replayer::wire
