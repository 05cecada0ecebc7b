#include "replayer/wire/roce_frame.h"

#include <cstring>

#include <fmt/format.h>

#include "common/bytes.h"
#include "replayer/wire/crc32.h"
#include "replayer/wire/icrc.h"

namespace collide::replayer::wire {
namespace {

using bytes::load_be16;
using bytes::load_be24;
using bytes::load_be32;
using bytes::load_be64;
using bytes::store_be16;
using bytes::store_be24;
using bytes::store_be32;
using bytes::store_be64;

constexpr size_t kHeadersBeforeBth = kEthHeaderSize + kIpv4HeaderSize + kUdpHeaderSize;

size_t padded(size_t len) { return (len + 3) & ~size_t{3}; }

size_t extension_size(const RoceHeaders& h) {
  return (h.reth ? kRethSize : 0) + (h.aeth ? kAethSize : 0);
}

void write_ethernet(uint8_t* p, const Endpoints& ep) {
  std::memcpy(p, ep.dst_mac.bytes.data(), 6);
  std::memcpy(p + 6, ep.src_mac.bytes.data(), 6);
  store_be16(p + 12, kEtherTypeIpv4);
}

void write_ipv4(uint8_t* p, const Endpoints& ep, size_t ip_total_len) {
  p[0] = 0x45;  // version 4, 5 words
  p[1] = ep.tos;
  store_be16(p + 2, static_cast<uint16_t>(ip_total_len));
  store_be16(p + 4, 0);       // identification
  store_be16(p + 6, 0x4000);  // don't fragment
  p[8] = ep.ttl;
  p[9] = kIpProtoUdp;
  store_be32(p + 12, ep.src_ip.host_order);
  store_be32(p + 16, ep.dst_ip.host_order);
  // The checksum from the field values rather than by reading the header back: reading 16-bit
  // words just written as bytes stalls store forwarding, which cost more than the rest of the
  // header.
  uint32_t sum = (0x4500u | ep.tos) + static_cast<uint32_t>(ip_total_len) + 0x4000u +
                 (uint32_t{ep.ttl} << 8 | kIpProtoUdp) + (ep.src_ip.host_order >> 16) +
                 (ep.src_ip.host_order & 0xffff) + (ep.dst_ip.host_order >> 16) +
                 (ep.dst_ip.host_order & 0xffff);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  store_be16(p + 10, static_cast<uint16_t>(~sum));
}

void write_udp(uint8_t* p, const Endpoints& ep, size_t udp_len) {
  store_be16(p, ep.udp_src_port);
  store_be16(p + 2, kRoceUdpPort);
  store_be16(p + 4, static_cast<uint16_t>(udp_len));
  store_be16(p + 6, 0);
}

void write_bth(uint8_t* p, const Bth& bth, uint8_t pad_count) {
  p[0] = static_cast<uint8_t>(bth.opcode);
  p[1] = static_cast<uint8_t>((bth.solicited ? 0x80 : 0) | (bth.migration_request ? 0x40 : 0) |
                              ((pad_count & 0x3) << 4));  // transport version 0
  store_be16(p + 2, bth.pkey);
  p[4] = static_cast<uint8_t>((bth.fecn ? 0x80 : 0) | (bth.becn ? 0x40 : 0));
  store_be24(p + 5, bth.dest_qp & 0xffffff);
  p[8] = bth.ack_request ? 0x80 : 0;
  store_be24(p + 9, bth.psn & kMaxPsn);
}

Bth read_bth(const uint8_t* p) {
  Bth bth;
  bth.opcode = static_cast<Opcode>(p[0]);
  bth.solicited = (p[1] & 0x80) != 0;
  bth.migration_request = (p[1] & 0x40) != 0;
  bth.pad_count = (p[1] >> 4) & 0x3;
  bth.pkey = load_be16(p + 2);
  bth.fecn = (p[4] & 0x80) != 0;
  bth.becn = (p[4] & 0x40) != 0;
  bth.dest_qp = load_be24(p + 5);
  bth.ack_request = (p[8] & 0x80) != 0;
  bth.psn = load_be24(p + 9);
  return bth;
}

}  // namespace

bool opcode_has_reth(Opcode op) { return op == Opcode::kWriteFirst || op == Opcode::kWriteOnly ||
                                         op == Opcode::kWriteOnlyImm || op == Opcode::kReadRequest; }

bool opcode_has_aeth(Opcode op) { return op == Opcode::kAcknowledge; }

uint16_t ipv4_header_checksum(std::span<const uint8_t> header) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < header.size(); i += 2) sum += load_be16(header.data() + i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

size_t roce_frame_size(const RoceHeaders& headers, size_t payload_len) {
  return kHeadersBeforeBth + kBthSize + extension_size(headers) + padded(payload_len) + kIcrcSize;
}

namespace {

// Checks the headers against the opcode and the frame against `out`; returns the frame length.
Result<size_t> check_frame(std::span<uint8_t> out, const RoceHeaders& headers,
                           size_t payload_len) {
  const Opcode op = headers.bth.opcode;
  if (opcode_has_reth(op) != headers.reth.has_value()) {
    return invalid_argument(fmt::format("opcode 0x{:02x} {} a RETH", static_cast<int>(op),
                                        opcode_has_reth(op) ? "needs" : "must not carry"));
  }
  if (opcode_has_aeth(op) != headers.aeth.has_value()) {
    return invalid_argument(fmt::format("opcode 0x{:02x} {} an AETH", static_cast<int>(op),
                                        opcode_has_aeth(op) ? "needs" : "must not carry"));
  }
  const size_t frame_len = roce_frame_size(headers, payload_len);
  if (frame_len > out.size()) {
    return invalid_argument(
        fmt::format("frame of {} bytes does not fit a {}-byte buffer", frame_len, out.size()));
  }
  if (frame_len - kEthHeaderSize > 0xffff) {
    return invalid_argument(fmt::format("payload {} too large", payload_len));
  }
  return frame_len;
}

// Writes Ethernet through the last extended transport header of a checked frame; returns where
// the payload goes.
uint8_t* write_headers(uint8_t* p, const RoceHeaders& headers, size_t frame_len,
                       size_t payload_len) {
  const size_t ip_len = frame_len - kEthHeaderSize;
  write_ethernet(p, headers.endpoints);
  write_ipv4(p + kEthHeaderSize, headers.endpoints, ip_len);
  write_udp(p + kEthHeaderSize + kIpv4HeaderSize, headers.endpoints, ip_len - kIpv4HeaderSize);

  const auto pad = static_cast<uint8_t>(padded(payload_len) - payload_len);
  uint8_t* cursor = p + kHeadersBeforeBth;
  write_bth(cursor, headers.bth, pad);
  cursor += kBthSize;
  if (headers.reth) {
    store_be64(cursor, headers.reth->virtual_address);
    store_be32(cursor + 8, headers.reth->rkey);
    store_be32(cursor + 12, headers.reth->dma_length);
    cursor += kRethSize;
  }
  if (headers.aeth) {
    cursor[0] = headers.aeth->syndrome;
    store_be24(cursor + 1, headers.aeth->msn & 0xffffff);
    cursor += kAethSize;
  }
  return cursor;
}

}  // namespace

size_t roce_payload_offset(const RoceHeaders& headers) {
  return kHeadersBeforeBth + kBthSize + extension_size(headers);
}

Result<size_t> write_roce_frame(std::span<uint8_t> out, const RoceHeaders& headers,
                                std::span<const uint8_t> payload) {
  auto frame_len = check_frame(out, headers, payload.size());
  if (!frame_len.ok()) return frame_len;
  uint8_t* p = out.data();
  uint8_t* cursor = write_headers(p, headers, *frame_len, payload.size());
  if (!payload.empty()) std::memcpy(cursor, payload.data(), payload.size());
  cursor += payload.size();
  const size_t pad = padded(payload.size()) - payload.size();
  std::memset(cursor, 0, pad);
  cursor += pad;

  const uint32_t icrc = compute_icrc({p + kEthHeaderSize, static_cast<size_t>(cursor - p) -
                                                              kEthHeaderSize});
  bytes::store_le32(cursor, icrc);
  return frame_len;
}

Result<size_t> finish_roce_frame(std::span<uint8_t> out, const RoceHeaders& headers,
                                 size_t payload_len, uint32_t payload_crc) {
  auto frame_len = check_frame(out, headers, payload_len);
  if (!frame_len.ok()) return frame_len;
  uint8_t* p = out.data();
  uint8_t* payload = write_headers(p, headers, *frame_len, payload_len);
  const size_t pad = padded(payload_len) - payload_len;
  std::memset(payload + payload_len, 0, pad);
  // The pad is zeros: its CRC is known too.
  const uint32_t padded_crc = crc32_concat(payload_crc, crc32_of_zeros(pad), pad);
  const uint32_t icrc = compute_icrc_from_payload_crc(
      {p + kEthHeaderSize, static_cast<size_t>(payload - p) - kEthHeaderSize}, padded_crc,
      payload_len + pad);
  bytes::store_le32(payload + payload_len + pad, icrc);
  return frame_len;
}

Result<ParsedRoceFrame> parse_roce_frame(std::span<const uint8_t> frame) {
  auto parsed = parse_roce_headers(frame);
  if (!parsed.ok()) return parsed;
  parsed->icrc_computed = icrc_of(frame, *parsed);
  return parsed;
}

uint32_t icrc_of(std::span<const uint8_t> frame, const ParsedRoceFrame& parsed) {
  // From the IP header up to the ICRC, which sits right after the padded payload.
  const uint8_t* ip = frame.data() + kEthHeaderSize;
  const uint8_t* icrc =
      parsed.payload.data() + parsed.payload.size() + parsed.headers.bth.pad_count;
  return compute_icrc({ip, static_cast<size_t>(icrc - ip)});
}

uint32_t icrc_of(std::span<const uint8_t> frame, const ParsedRoceFrame& parsed,
                 uint32_t payload_crc) {
  const uint8_t* ip = frame.data() + kEthHeaderSize;
  const std::span<const uint8_t> pad(parsed.payload.data() + parsed.payload.size(),
                                     parsed.headers.bth.pad_count);
  // The pad as it is on the wire (a sender may put anything there; the ICRC covers it).
  const uint32_t padded_crc = crc32_concat(payload_crc, crc32_of(pad), pad.size());
  return compute_icrc_from_payload_crc({ip, static_cast<size_t>(parsed.payload.data() - ip)},
                                       padded_crc, parsed.payload.size() + pad.size());
}

Result<ParsedRoceFrame> parse_roce_headers(std::span<const uint8_t> frame) {
  if (frame.size() < kHeadersBeforeBth + kBthSize + kIcrcSize) {
    return invalid_argument(fmt::format("{}-byte frame is too short for RoCEv2", frame.size()));
  }
  const uint8_t* p = frame.data();
  if (load_be16(p + 12) != kEtherTypeIpv4) return invalid_argument("not IPv4");
  const uint8_t* ip = p + kEthHeaderSize;
  const size_t ihl = static_cast<size_t>(ip[0] & 0x0f) * 4;
  if ((ip[0] >> 4) != 4 || ihl < kIpv4HeaderSize) return invalid_argument("bad IPv4 header");
  if (ip[9] != kIpProtoUdp) return invalid_argument("not UDP");
  const size_t ip_total = load_be16(ip + 2);
  if (ip_total < ihl + kUdpHeaderSize + kBthSize + kIcrcSize ||
      kEthHeaderSize + ip_total > frame.size()) {
    return invalid_argument(fmt::format("IPv4 length {} does not fit the {}-byte frame", ip_total,
                                        frame.size()));
  }
  const uint8_t* udp = ip + ihl;
  if (load_be16(udp + 2) != kRoceUdpPort) return invalid_argument("not UDP port 4791");

  ParsedRoceFrame parsed;
  Endpoints& ep = parsed.headers.endpoints;
  std::memcpy(ep.dst_mac.bytes.data(), p, 6);
  std::memcpy(ep.src_mac.bytes.data(), p + 6, 6);
  ep.tos = ip[1];
  ep.ttl = ip[8];
  ep.src_ip.host_order = load_be32(ip + 12);
  ep.dst_ip.host_order = load_be32(ip + 16);
  ep.udp_src_port = load_be16(udp);

  const uint8_t* end = ip + ip_total;  // Ethernet padding after the IP packet is ignored
  const uint8_t* cursor = udp + kUdpHeaderSize;
  parsed.headers.bth = read_bth(cursor);
  cursor += kBthSize;
  const Opcode op = parsed.headers.bth.opcode;
  const size_t ext = (opcode_has_reth(op) ? kRethSize : 0) + (opcode_has_aeth(op) ? kAethSize : 0);
  if (cursor + ext + kIcrcSize > end) return invalid_argument("truncated extended headers");
  if (opcode_has_reth(op)) {
    parsed.headers.reth = Reth{load_be64(cursor), load_be32(cursor + 8), load_be32(cursor + 12)};
    cursor += kRethSize;
  }
  if (opcode_has_aeth(op)) {
    parsed.headers.aeth = Aeth{cursor[0], load_be24(cursor + 1)};
    cursor += kAethSize;
  }
  const size_t padded_payload = static_cast<size_t>(end - kIcrcSize - cursor);
  const size_t pad = parsed.headers.bth.pad_count;
  if (pad > padded_payload) return invalid_argument("pad count exceeds the payload");
  parsed.payload = {cursor, padded_payload - pad};
  parsed.icrc_on_wire = bytes::load_le32(end - kIcrcSize);
  return parsed;
}

}  // namespace collide::replayer::wire
