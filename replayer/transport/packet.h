#pragma once

#include <cstdint>

#include "replayer/wire/roce_frame.h"

// The transport's view of a packet: what the state machines decide, before (or after) the wire
// layer turns it into a RoCEv2 frame. PSNs are kept unwrapped (64 bits) here; the wire carries
// their low 24 bits and the receiving side unwraps them against its expected PSN.
namespace collide::replayer::transport {

using Nanos = uint64_t;

enum class PacketType : uint8_t {
  kData,  // RDMA WRITE FIRST/MIDDLE/LAST/ONLY
  kAck,   // AETH ACK: every PSN before `psn` + 1 arrived
  kNak,   // AETH NAK (PSN sequence error): `psn` is the first missing one
  kCnp,   // congestion notification (the receiver saw ECN CE)
  // Selective ACK (out-of-order mode): every PSN before `psn` arrived (it is the first missing,
  // as in a NAK), and bit i of `sack_bitmap` says that `sack_psn` + i arrived too.
  kSack,
};

struct Packet {
  PacketType type = PacketType::kData;
  uint32_t qpn = 0;  // destination QP
  uint64_t psn = 0;
  // Data packets.
  wire::Opcode opcode = wire::Opcode::kWriteOnly;
  uint32_t payload_bytes = 0;
  uint64_t message_seq = 0;     // the message's number on its QP, from 0
  uint64_t message_tag = 0;     // the sender's name for the message (RETH virtual address)
  uint64_t message_bytes = 0;   // the whole message (RETH DMA length on FIRST/ONLY)
  uint64_t message_offset = 0;  // where this payload starts in the message
  bool ack_request = false;
  bool ecn_ce = false;          // marked by the network
  bool retransmission = false;  // sender's bookkeeping, not on the wire
  // Selective repeat NAKs also name the out-of-order PSN that revealed the gap, so the sender
  // can tell which packets did arrive (carried after the AETH; go-back-N leaves it 0). In a
  // selective ACK it is the first PSN the bitmap describes (never 0: it lies beyond a hole).
  uint64_t sack_psn = 0;
  uint64_t sack_bitmap = 0;

  bool is_last_of_message() const {
    return opcode == wire::Opcode::kWriteLast || opcode == wire::Opcode::kWriteOnly ||
           opcode == wire::Opcode::kWriteLastImm || opcode == wire::Opcode::kWriteOnlyImm;
  }
  // Bytes on the wire: RoCEv2 headers, payload, ICRC.
  uint32_t wire_bytes() const;
};

}  // namespace collide::replayer::transport
