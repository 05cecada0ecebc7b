#include "replayer/transport/frame_codec.h"

#include <array>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "common/bytes.h"
#include "replayer/wire/crc32.h"
#include "replayer/wire/payload_pattern.h"
#include "replayer/wire/roce_frame.h"

namespace collide::replayer::transport {
namespace {

constexpr uint8_t kEctZero = 0x02;
constexpr uint8_t kEcnCe = 0x03;

// The IP header's TOS byte: the DSCP in its upper six bits, ECN in the lower two.
uint8_t tos_of(uint8_t dscp, uint8_t ecn) { return static_cast<uint8_t>(dscp << 2 | ecn); }
constexpr uint8_t kAckSyndrome = 0x1f;  // ACK with "invalid credit count": no credit flow control
constexpr uint8_t kNakSequenceError = 0x60;
constexpr size_t kCnpPadding = 16;
constexpr size_t kSackBytes = 4;
constexpr size_t kSelectiveAckBytes = 12;  // the bitmap's first PSN (32 bits) and the bitmap

wire::RoceHeaders headers_for(const Packet& p, const FrameAddress& a) {
  wire::RoceHeaders h;
  h.endpoints.src_mac = a.src_mac;
  h.endpoints.dst_mac = a.dst_mac;
  h.endpoints.src_ip = a.src_ip;
  h.endpoints.dst_ip = a.dst_ip;
  h.endpoints.udp_src_port = a.udp_src_port;
  h.endpoints.tos = tos_of(a.dscp, 0);
  h.bth.dest_qp = p.qpn & 0xffffff;
  h.bth.psn = static_cast<uint32_t>(p.psn & wire::kMaxPsn);
  switch (p.type) {
    case PacketType::kData:
      h.endpoints.tos = tos_of(a.dscp, p.ecn_ce ? kEcnCe : kEctZero);
      h.bth.opcode = p.opcode;
      h.bth.ack_request = p.ack_request;
      if (wire::opcode_has_reth(p.opcode)) {
        h.reth = wire::Reth{p.message_tag, 0, static_cast<uint32_t>(p.message_bytes)};
      }
      break;
    case PacketType::kAck:
    case PacketType::kNak:
    case PacketType::kSack:
      h.bth.opcode = wire::Opcode::kAcknowledge;
      h.aeth = wire::Aeth{p.type == PacketType::kNak ? kNakSequenceError : kAckSyndrome, 0};
      break;
    case PacketType::kCnp:
      h.bth.opcode = wire::Opcode::kCnp;
      h.bth.becn = true;
      h.bth.psn = 0;
      break;
  }
  return h;
}

// The seed of a packet's pattern: a SplitMix64 step over its QP and PSN.
uint64_t pattern_seed(uint32_t qpn, uint32_t psn24) {
  uint64_t z = (uint64_t{qpn} << 24 | psn24) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A memo for `len` zero bytes at `offset`: a marker bit, the offset and the length.
uint64_t zeros_memo(size_t offset, size_t len) {
  return uint64_t{1} << 63 | uint64_t{offset & 0xffff} << 32 | (len & 0xffffffff);
}

// Writes a data packet's payload: the pattern, or zeros (left in place when the buffer's memo says
// it already holds them). Returns the payload's CRC, known from what it is; `zeros_crc(len)`
// gives that of zeros (an encoder may have the usual length's at hand).
template <typename ZerosCrc>
uint32_t write_data_payload(std::span<uint8_t> payload, size_t offset, const Packet& p,
                            bool fill_pattern, PayloadMemo* memo, ZerosCrc zeros_crc) {
  if (fill_pattern) {
    const uint64_t seed = pattern_seed(p.qpn, static_cast<uint32_t>(p.psn & wire::kMaxPsn));
    wire::fill_payload_pattern(payload, seed);
    return wire::payload_pattern_crc(payload, seed);
  }
  const uint64_t zeros = zeros_memo(offset, payload.size());
  if (memo == nullptr || memo->held != zeros) std::memset(payload.data(), 0, payload.size());
  if (memo != nullptr) memo->written = zeros;
  return zeros_crc(payload.size());
}

}  // namespace

void fill_payload_pattern(std::span<uint8_t> payload, uint32_t qpn, uint32_t psn24) {
  wire::fill_payload_pattern(payload, pattern_seed(qpn, psn24));
}

bool payload_matches_pattern(std::span<const uint8_t> payload, uint32_t qpn, uint32_t psn24) {
  return wire::payload_matches_pattern(payload, pattern_seed(qpn, psn24));
}

uint64_t unwrap_psn(uint32_t wire_psn, uint64_t reference) {
  constexpr int64_t kSpan = int64_t{1} << 24;
  // Distance from the reference's low 24 bits, folded into [-2^23, 2^23).
  int64_t delta = static_cast<int64_t>(wire_psn & wire::kMaxPsn) -
                  static_cast<int64_t>(reference & wire::kMaxPsn);
  if (delta >= kSpan / 2) delta -= kSpan;
  if (delta < -kSpan / 2) delta += kSpan;
  const int64_t unwrapped = static_cast<int64_t>(reference) + delta;
  return unwrapped < 0 ? wire_psn : static_cast<uint64_t>(unwrapped);
}

Result<size_t> encode_frame(std::span<uint8_t> out, const Packet& p, const FrameAddress& address,
                            bool fill_pattern, PayloadMemo* memo) {
  if (memo != nullptr) memo->written = 0;
  if (p.type == PacketType::kData && p.message_bytes > std::numeric_limits<uint32_t>::max()) {
    return invalid_argument(fmt::format("message of {} bytes exceeds a RETH's 32-bit length",
                                        p.message_bytes));
  }
  const wire::RoceHeaders h = headers_for(p, address);
  size_t payload_len = 0;
  switch (p.type) {
    case PacketType::kData: payload_len = p.payload_bytes; break;
    case PacketType::kNak: payload_len = p.sack_psn != 0 ? kSackBytes : 0; break;
    case PacketType::kCnp: payload_len = kCnpPadding; break;
    case PacketType::kSack: payload_len = kSelectiveAckBytes; break;
    case PacketType::kAck: break;
  }
  if (wire::roce_frame_size(h, payload_len) > out.size()) {
    return invalid_argument(fmt::format(
        "frame with a {}-byte payload does not fit a {}-byte buffer", payload_len, out.size()));
  }
  // The payload is written straight into the frame, and its CRC comes from what it is (zeros, or
  // the pattern's seed), so the ICRC costs the headers only.
  const std::span<uint8_t> payload = out.subspan(wire::roce_payload_offset(h), payload_len);
  uint32_t payload_crc = 0;
  switch (p.type) {
    case PacketType::kData:
      payload_crc = write_data_payload(payload, wire::roce_payload_offset(h), p, fill_pattern, memo,
                                       wire::crc32_of_zeros);
      break;
    case PacketType::kNak:
      if (!payload.empty()) {
        bytes::store_be32(payload.data(), static_cast<uint32_t>(p.sack_psn & wire::kMaxPsn));
        payload_crc = wire::crc32_of(payload);
      }
      break;
    case PacketType::kCnp:
      std::memset(payload.data(), 0, payload.size());
      payload_crc = wire::crc32_of_zeros(payload.size());
      break;
    case PacketType::kSack:
      bytes::store_be32(payload.data(), static_cast<uint32_t>(p.sack_psn & wire::kMaxPsn));
      bytes::store_be64(payload.data() + 4, p.sack_bitmap);
      payload_crc = wire::crc32_of(payload);
      break;
    case PacketType::kAck:
      break;
  }
  return wire::finish_roce_frame(out, h, payload_len, payload_crc);
}

namespace {

wire::Endpoints endpoints_of(const FrameAddress& a) {
  wire::Endpoints ep;
  ep.src_mac = a.src_mac;
  ep.dst_mac = a.dst_mac;
  ep.src_ip = a.src_ip;
  ep.dst_ip = a.dst_ip;
  ep.udp_src_port = a.udp_src_port;
  ep.tos = tos_of(a.dscp, kEctZero);  // what data frames leave with; the network may mark them CE
  return ep;
}

bool is_plain_write(wire::Opcode op) {
  return op == wire::Opcode::kWriteFirst || op == wire::Opcode::kWriteMiddle ||
         op == wire::Opcode::kWriteLast || op == wire::Opcode::kWriteOnly;
}

}  // namespace

QpFrameEncoder::QpFrameEncoder(const FrameAddress& address, uint32_t qpn, uint32_t mtu)
    : address_(address),
      qpn_(qpn & 0xffffff),
      template_(endpoints_of(address), qpn_, mtu),
      typical_zeros_memo_(zeros_memo(kTypicalPayloadOffset, mtu)),
      typical_zeros_crc_(template_.zeros_crc(mtu)) {}

Result<size_t> QpFrameEncoder::encode_other(std::span<uint8_t> out, const Packet& p,
                                            bool fill_pattern, PayloadMemo* memo) const {
  const size_t offset = wire::DataFrameTemplate::payload_offset(p.opcode);
  const size_t padded_end = offset + ((size_t{p.payload_bytes} + 3) & ~size_t{3});
  // The rare and the wrong take the general path, which also words the errors.
  if (p.type != PacketType::kData || (p.qpn & 0xffffff) != qpn_ || !is_plain_write(p.opcode) ||
      p.message_bytes > std::numeric_limits<uint32_t>::max() ||
      padded_end + wire::kIcrcSize > out.size()) {
    return encode_frame(out, p, address_, fill_pattern, memo);
  }
  if (memo != nullptr) memo->written = 0;
  const std::span<uint8_t> payload = out.subspan(offset, p.payload_bytes);
  const auto psn24 = static_cast<uint32_t>(p.psn & wire::kMaxPsn);
  const uint32_t payload_crc = write_data_payload(
      payload, offset, p, fill_pattern, memo, [this](size_t len) { return template_.zeros_crc(len); });
  wire::DataFrameFields f;
  f.opcode = p.opcode;
  f.ack_request = p.ack_request;
  f.psn = psn24;
  f.tos = tos_of(address_.dscp, p.ecn_ce ? kEcnCe : kEctZero);
  f.payload_len = p.payload_bytes;
  f.reth_address = p.message_tag;
  f.reth_length = static_cast<uint32_t>(p.message_bytes);
  return template_.finish(out, f, payload_crc);
}

namespace {

bool all_zero(std::span<const uint8_t> bytes) {
  uint64_t any = 0;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    any |= w;
  }
  for (; i < bytes.size(); ++i) any |= bytes[i];
  return any == 0;
}

// A data frame's computed ICRC. The receiver reads the payload once: checking the pattern (when
// asked) or whether it is all zeros (what unverified senders send) proves what it holds, and
// then its CRC is known without a CRC pass over it. Any other payload is checksummed byte by
// byte. Sets `pattern_ok` when verifying.
uint32_t data_icrc(std::span<const uint8_t> frame, const wire::ParsedRoceFrame& parsed,
                   bool verify_pattern, bool& pattern_ok) {
  const std::span<const uint8_t> payload = parsed.payload;
  if (verify_pattern) {
    const uint64_t seed = pattern_seed(parsed.headers.bth.dest_qp, parsed.headers.bth.psn);
    pattern_ok = wire::payload_matches_pattern(payload, seed);
    if (pattern_ok) return wire::icrc_of(frame, parsed, wire::payload_pattern_crc(payload, seed));
  } else if (all_zero(payload)) {
    return wire::icrc_of(frame, parsed, wire::crc32_of_zeros(payload.size()));
  }
  return wire::icrc_of(frame, parsed);
}

}  // namespace

Result<DecodedFrame> decode_frame(std::span<const uint8_t> frame, bool verify_pattern) {
  auto parsed = wire::parse_roce_headers(frame);
  if (!parsed.ok()) return parsed.status();
  const wire::RoceHeaders& h = parsed->headers;
  DecodedFrame d;
  d.src_ip = h.endpoints.src_ip;
  d.dst_ip = h.endpoints.dst_ip;
  Packet& p = d.packet;
  p.qpn = h.bth.dest_qp;
  p.psn = h.bth.psn;
  switch (h.bth.opcode) {
    case wire::Opcode::kWriteFirst:
    case wire::Opcode::kWriteMiddle:
    case wire::Opcode::kWriteLast:
    case wire::Opcode::kWriteOnly:
      p.type = PacketType::kData;
      p.opcode = h.bth.opcode;
      p.ack_request = h.bth.ack_request;
      p.ecn_ce = (h.endpoints.tos & 0x03) == kEcnCe;
      p.payload_bytes = static_cast<uint32_t>(parsed->payload.size());
      if (h.reth) {
        p.message_tag = h.reth->virtual_address;
        p.message_bytes = h.reth->dma_length;
      }
      d.icrc_ok = parsed->icrc_on_wire == data_icrc(frame, *parsed, verify_pattern, d.pattern_ok);
      return d;
    case wire::Opcode::kAcknowledge: {
      d.icrc_ok = parsed->icrc_on_wire == wire::icrc_of(frame, *parsed);
      const uint8_t syndrome = h.aeth ? h.aeth->syndrome : 0xff;
      if (syndrome <= 0x1f && parsed->payload.size() >= kSelectiveAckBytes) {
        p.type = PacketType::kSack;
        p.sack_psn = bytes::load_be32(parsed->payload.data()) & wire::kMaxPsn;
        p.sack_bitmap = bytes::load_be64(parsed->payload.data() + 4);
      } else if (syndrome <= 0x1f) {
        p.type = PacketType::kAck;
      } else if (syndrome == kNakSequenceError) {
        p.type = PacketType::kNak;
        if (parsed->payload.size() >= kSackBytes) {
          p.sack_psn = bytes::load_be32(parsed->payload.data()) & wire::kMaxPsn;
        }
      } else {
        return invalid_argument(fmt::format("unsupported AETH syndrome 0x{:02x}", syndrome));
      }
      return d;
    }
    case wire::Opcode::kCnp:
      p.type = PacketType::kCnp;
      d.icrc_ok = parsed->icrc_on_wire == wire::icrc_of(frame, *parsed);
      return d;
    default:
      return invalid_argument(
          fmt::format("unsupported opcode 0x{:02x}", static_cast<int>(h.bth.opcode)));
  }
}

}  // namespace collide::replayer::transport
