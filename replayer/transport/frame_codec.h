#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "common/result.h"
#include "replayer/transport/packet.h"
#include "replayer/wire/addresses.h"
#include "replayer/wire/data_frame_template.h"

// Turns transport packets into RoCEv2 frames and back.
//
// Data packets are RDMA WRITEs; FIRST/ONLY carry a RETH whose virtual address is the message's
// tag and whose DMA length is the message size. ACKs and NAKs are ACKNOWLEDGE packets with an
// AETH (syndrome 0x00 ACK, 0x60 PSN sequence error NAK); selective repeat NAKs append four bytes
// holding the out-of-order PSN that revealed the gap (IRN's extension, not in RoCEv2). Selective
// ACKs of the out-of-order mode are ACKs (syndrome 0x00) whose BTH PSN is the first missing one,
// not the last received, followed by twelve bytes: the first PSN of a 64-bit bitmap (32 bits,
// PSN in the low 24) and the bitmap, bit i for that PSN + i; this is not RoCEv2 either, but the
// shape of the SACKs of NICs with out-of-order placement and of UEC's RUD. CNPs are
// opcode 0x81 with BECN set and 16 zero bytes. Data frames are sent ECN-capable (ECT(0)); a
// switch or injector turns that into CE. Every frame carries the address's DSCP.
namespace collide::replayer::transport {

struct FrameAddress {
  wire::MacAddress src_mac;
  wire::MacAddress dst_mac;
  wire::Ipv4Address src_ip;
  wire::Ipv4Address dst_ip;
  uint16_t udp_src_port = 0xc000;
  uint8_t dscp = 0;  // of every frame (0-63); ECN's two bits are the codec's
};

// The payload of the data packet with `psn` on QP `qpn`: 64-bit words that differ for every
// packet and every position, so the receiver can prove each byte arrived where it belongs.
void fill_payload_pattern(std::span<uint8_t> payload, uint32_t qpn, uint32_t psn24);
bool payload_matches_pattern(std::span<const uint8_t> payload, uint32_t qpn, uint32_t psn24);

// What a reused buffer's payload bytes hold, so that filling it again with the same bytes can be
// skipped: `held` is what the buffer held before (0: unknown), `written` what encode_frame left.
// Only the zeros of unverified data packets are described (the pattern changes every packet);
// the memo names their offset and length, and the rest of the frame never overlaps them.
struct PayloadMemo {
  uint64_t held = 0;
  uint64_t written = 0;
};

// Writes the frame into `out`; the payload of data packets is the pattern, or zeros. The ICRC
// costs the headers only: the payload's CRC follows from what it is.
Result<size_t> encode_frame(std::span<uint8_t> out, const Packet& p, const FrameAddress& address,
                            bool fill_pattern, PayloadMemo* memo = nullptr);

// encode_frame for a sender's frames to one QP, byte for byte, from a template of that QP's
// headers (wire::DataFrameTemplate). MIDDLE and LAST packets of the QP's MTU with unverified (zero)
// payloads, nearly every frame of a large transfer, take an inline path: a header copy, the
// AckReq/PSN word and four lookups for the ICRC, and no payload write when the buffer's memo says
// it already holds the zeros. Other data packets cost a header copy, a few stores and table
// lookups; anything else (ACKs, NAKs, CNPs, packets for another QP) goes through encode_frame.
class QpFrameEncoder {
 public:
  // `mtu`: the payload size most packets have.
  QpFrameEncoder(const FrameAddress& address, uint32_t qpn, uint32_t mtu);

  Result<size_t> encode(std::span<uint8_t> out, const Packet& p, bool fill_pattern,
                        PayloadMemo* memo = nullptr) const {
    if (fill_pattern || p.type != PacketType::kData || (p.qpn & 0xffffff) != qpn_ || p.ecn_ce ||
        p.message_bytes > UINT32_MAX ||  // encode_frame refuses those, RETH or not
        !template_.is_typical(p.opcode, p.payload_bytes, template_.usual_tos(), out.size())) {
      return encode_other(out, p, fill_pattern, memo);
    }
    if (memo == nullptr || memo->held != typical_zeros_memo_) {
      std::memset(out.data() + kTypicalPayloadOffset, 0, p.payload_bytes);
    }
    if (memo != nullptr) memo->written = typical_zeros_memo_;
    return template_.write_typical(out.data(), p.opcode, p.ack_request,
                                   static_cast<uint32_t>(p.psn), typical_zeros_crc_);
  }

  const FrameAddress& address() const { return address_; }
  uint32_t qpn() const { return qpn_; }

 private:
  static constexpr size_t kTypicalPayloadOffset =
      wire::DataFrameTemplate::payload_offset(wire::Opcode::kWriteMiddle);

  Result<size_t> encode_other(std::span<uint8_t> out, const Packet& p, bool fill_pattern,
                              PayloadMemo* memo) const;

  FrameAddress address_;
  uint32_t qpn_;
  wire::DataFrameTemplate template_;
  uint64_t typical_zeros_memo_ = 0;
  uint32_t typical_zeros_crc_ = 0;
};

struct DecodedFrame {
  Packet packet;  // psn holds the 24 bits from the wire: unwrap with unwrap_psn
  wire::Ipv4Address src_ip;
  wire::Ipv4Address dst_ip;
  bool icrc_ok = false;
  bool pattern_ok = true;  // only checked when asked
};

// Parses a RoCEv2 frame back into a packet. Anything that is not one of the packets above is
// kInvalidArgument (the caller counts it as foreign traffic).
Result<DecodedFrame> decode_frame(std::span<const uint8_t> frame, bool verify_pattern);

// The 64-bit PSN nearest to `reference` whose low 24 bits are `wire_psn`.
uint64_t unwrap_psn(uint32_t wire_psn, uint64_t reference);

}  // namespace collide::replayer::transport
