#include "replayer/transport/responder.h"

namespace collide::replayer::transport {

Responder::Responder(uint32_t remote_qpn, QpConfig config, Nanos cnp_interval_ns)
    : remote_qpn_(remote_qpn), config_(config), cnp_interval_ns_(cnp_interval_ns) {}

Packet Responder::response(PacketType type, uint64_t psn) const {
  Packet r;
  r.type = type;
  r.qpn = remote_qpn_;
  r.psn = psn;
  return r;
}

void Responder::accept(const Packet& p, Nanos now) {
  counters_.bytes_received += p.payload_bytes;
  message_bytes_so_far_ += p.payload_bytes;
  ++expected_psn_;
  if (p.opcode == wire::Opcode::kWriteFirst || p.opcode == wire::Opcode::kWriteOnly ||
      p.opcode == wire::Opcode::kWriteOnlyImm) {
    message_tag_ = p.message_tag;
  }
  if (p.is_last_of_message()) {
    // Messages arrive in order on a QP, so the responder numbers them itself (the MSN).
    deliveries_.push_back({messages_delivered_++, message_tag_, message_bytes_so_far_, now});
    message_bytes_so_far_ = 0;
  }
}

std::vector<Packet> Responder::on_packet(const Packet& p, Nanos now) {
  std::vector<Packet> out;
  if (p.type != PacketType::kData) return out;
  ++counters_.packets_received;
  if (p.ecn_ce) {
    ++counters_.ecn_marked;
    if (!last_cnp_ || now >= *last_cnp_ + cnp_interval_ns_) {
      last_cnp_ = now;
      ++counters_.cnps_sent;
      out.push_back(response(PacketType::kCnp, 0));
    }
  }

  if (p.psn < expected_psn_) {
    // Already delivered: the sender missed our ACK; acknowledge again.
    ++counters_.duplicates;
    ++counters_.acks_sent;
    out.push_back(response(PacketType::kAck, expected_psn_ - 1));
    return out;
  }
  if (p.psn > expected_psn_) {
    ++counters_.out_of_order;
    if (config_.recovery == Recovery::kGoBackN) {
      if (!nak_sent_for_gap_) {
        nak_sent_for_gap_ = true;
        ++counters_.naks_sent;
        out.push_back(response(PacketType::kNak, expected_psn_));
      }
      return out;
    }
    // Selective repeat: keep it and report the hole together with what arrived.
    if (held_.size() < config_.max_outstanding) held_.emplace(p.psn, p);
    Packet nak = response(PacketType::kNak, expected_psn_);
    nak.sack_psn = p.psn;
    ++counters_.naks_sent;
    out.push_back(nak);
    return out;
  }

  accept(p, now);
  nak_sent_for_gap_ = false;
  bool ack = p.ack_request;
  // Selective repeat: the hole is filled; deliver what was waiting behind it.
  for (auto it = held_.find(expected_psn_); it != held_.end(); it = held_.find(expected_psn_)) {
    ack = ack || it->second.ack_request;
    accept(it->second, now);
    held_.erase(it);
  }
  if (ack || !held_.empty()) {
    ++counters_.acks_sent;
    out.push_back(response(PacketType::kAck, expected_psn_ - 1));
  }
  return out;
}

std::vector<MessageDelivery> Responder::take_deliveries() {
  std::vector<MessageDelivery> out;
  out.swap(deliveries_);
  return out;
}

}  // namespace collide::replayer::transport
