#include "replayer/transport/responder.h"

#include <algorithm>

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
  if (config_.recovery == Recovery::kOutOfOrder && held_.count(p.psn)) {
    // Kept already (a resend crossed the original): acknowledge again, as below the window.
    ++counters_.duplicates;
    out.push_back(held_response());
    return out;
  }
  if (p.psn > expected_psn_) {
    ++counters_.out_of_order;
    if (config_.recovery == Recovery::kOutOfOrder) {
      // Placed by PSN and acknowledged selectively; a gap is no sign of loss here (spraying
      // reorders), so the sender, not the receiver, decides when a hole is lost.
      if (held_.size() < config_.max_outstanding) held_.emplace(p.psn, p);
      // The bitmap ends at the packet that just arrived, so that over successive SACKs the
      // sender hears of every packet kept, however far beyond the hole.
      out.push_back(selective_ack(std::max(expected_psn_ + 1, p.psn >= 63 ? p.psn - 63 : 0)));
      return out;
    }
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
  if (ack || !held_.empty()) out.push_back(held_response());
  return out;
}

Packet Responder::held_response() {
  if (config_.recovery == Recovery::kOutOfOrder && !held_.empty()) {
    return selective_ack(held_.begin()->first);  // the bitmap starts at the first packet kept
  }
  ++counters_.acks_sent;
  return response(PacketType::kAck, expected_psn_ - 1);
}

Packet Responder::selective_ack(uint64_t first) {
  Packet r = response(PacketType::kSack, expected_psn_);
  r.sack_psn = first;
  for (auto it = held_.lower_bound(r.sack_psn); it != held_.end() && it->first < r.sack_psn + 64;
       ++it) {
    r.sack_bitmap |= uint64_t{1} << (it->first - r.sack_psn);
  }
  ++counters_.acks_sent;
  return r;
}

std::vector<MessageDelivery> Responder::take_deliveries() {
  std::vector<MessageDelivery> out;
  out.swap(deliveries_);
  return out;
}

}  // namespace collide::replayer::transport
