#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/result.h"
#include "replayer/wire/addresses.h"

// RoCEv2 frames as they go on the wire: Ethernet / IPv4 / UDP 4791 / BTH / [RETH] / [AETH] /
// payload / pad / ICRC. The field layouts follow the InfiniBand Architecture Specification,
// volume 1, chapter 9 and annex A17 (RoCEv2).
namespace collide::replayer::wire {

inline constexpr uint16_t kRoceUdpPort = 4791;
inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint8_t kIpProtoUdp = 17;
inline constexpr size_t kEthHeaderSize = 14;
inline constexpr size_t kIpv4HeaderSize = 20;
inline constexpr size_t kUdpHeaderSize = 8;
inline constexpr size_t kBthSize = 12;
inline constexpr size_t kRethSize = 16;
inline constexpr size_t kAethSize = 4;
inline constexpr size_t kIcrcSize = 4;
inline constexpr uint16_t kDefaultPkey = 0xffff;
inline constexpr uint32_t kMaxPsn = 0xffffff;

// Reliable-connection opcodes (BTH byte 0) and the congestion notification packet.
enum class Opcode : uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendLastImm = 0x03,
  kSendOnly = 0x04,
  kSendOnlyImm = 0x05,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,
  kWriteOnly = 0x0a,
  kWriteOnlyImm = 0x0b,
  kReadRequest = 0x0c,
  kAcknowledge = 0x11,
  kCnp = 0x81,
};

// Whether an opcode carries a RETH (RDMA WRITE FIRST/ONLY) or an AETH (ACKNOWLEDGE).
bool opcode_has_reth(Opcode op);
bool opcode_has_aeth(Opcode op);

struct Endpoints {
  MacAddress src_mac;
  MacAddress dst_mac;
  Ipv4Address src_ip;
  Ipv4Address dst_ip;
  uint16_t udp_src_port = 0xc000;  // entropy for ECMP; varied per QP
  uint8_t tos = 0;                 // DSCP << 2 | ECN
  uint8_t ttl = 64;
};

// Base Transport Header.
struct Bth {
  Opcode opcode = Opcode::kWriteOnly;
  bool solicited = false;
  bool migration_request = false;
  uint8_t pad_count = 0;  // set by the builder from the payload length
  uint16_t pkey = kDefaultPkey;
  bool fecn = false;
  bool becn = false;
  uint32_t dest_qp = 0;  // 24 bits
  bool ack_request = false;
  uint32_t psn = 0;  // 24 bits
};

// RDMA Extended Transport Header.
struct Reth {
  uint64_t virtual_address = 0;
  uint32_t rkey = 0;
  uint32_t dma_length = 0;
};

// ACK Extended Transport Header.
struct Aeth {
  uint8_t syndrome = 0;
  uint32_t msn = 0;  // 24 bits
};

struct RoceHeaders {
  Endpoints endpoints;
  Bth bth;
  std::optional<Reth> reth;  // required exactly when the opcode carries one
  std::optional<Aeth> aeth;
};

// Bytes a frame takes from the Ethernet header through the ICRC (no FCS), payload padded to 4.
size_t roce_frame_size(const RoceHeaders& headers, size_t payload_len);

// Writes a complete frame into `out`: headers, payload, pad, IPv4 checksum, ICRC. The UDP checksum
// is zero, as RoCEv2 senders leave it. Returns the frame length.
Result<size_t> write_roce_frame(std::span<uint8_t> out, const RoceHeaders& headers,
                                std::span<const uint8_t> payload);

// Where the payload starts in a frame with these headers.
size_t roce_payload_offset(const RoceHeaders& headers);

// write_roce_frame for a payload the caller has already put in place, at
// roce_payload_offset(headers) in `out`, and whose crc32 (zlib's convention, without pad) it
// knows: writes the headers, pad and ICRC and reads only the headers, so the cost does not grow
// with the payload. Gives the same bytes as write_roce_frame with that payload.
Result<size_t> finish_roce_frame(std::span<uint8_t> out, const RoceHeaders& headers,
                                 size_t payload_len, uint32_t payload_crc);

struct ParsedRoceFrame {
  RoceHeaders headers;
  std::span<const uint8_t> payload;  // without pad
  uint32_t icrc_on_wire = 0;
  uint32_t icrc_computed = 0;
  bool icrc_ok() const { return icrc_on_wire == icrc_computed; }
};

// Parses an Ethernet frame (no FCS). Frames that are not IPv4/UDP 4791 with a BTH, or that are
// truncated, give kInvalidArgument; a bad ICRC is reported in the result, not as an error.
Result<ParsedRoceFrame> parse_roce_frame(std::span<const uint8_t> frame);

// parse_roce_frame without computing the ICRC (icrc_computed is left 0): for a receiver that
// learns the payload's CRC while checking its content, and then needs only icrc_of below.
Result<ParsedRoceFrame> parse_roce_headers(std::span<const uint8_t> frame);

// The ICRC of `frame`, parsed by parse_roce_headers, from the crc32 (zlib's convention) of its
// payload without pad: reads the headers and the pad, not the payload. Equal to compute_icrc
// over the whole packet when `payload_crc` is that of parsed.payload.
uint32_t icrc_of(std::span<const uint8_t> frame, const ParsedRoceFrame& parsed,
                 uint32_t payload_crc);
// The same over every byte (what parse_roce_frame computes).
uint32_t icrc_of(std::span<const uint8_t> frame, const ParsedRoceFrame& parsed);

// The standard Internet checksum of an IPv4 header with its checksum field as it is.
uint16_t ipv4_header_checksum(std::span<const uint8_t> header);

}  // namespace collide::replayer::wire
