#include "replayer/transport/requester.h"

#include <algorithm>

#include <fmt/format.h>

namespace collide::replayer::transport {

Requester::Requester(uint32_t remote_qpn, QpConfig config)
    : remote_qpn_(remote_qpn), config_(config), retries_left_(config.retry_count) {}

uint64_t Requester::post(uint64_t bytes, Nanos now, uint64_t tag) {
  // A zero-byte write still takes one packet, so that it is acknowledged like any other.
  const uint64_t packets = bytes == 0 ? 1 : (bytes + config_.mtu - 1) / config_.mtu;
  if (messages_.empty()) last_progress_ = now;
  messages_.push_back({next_message_seq_, tag, bytes, end_psn_, packets, now});
  end_psn_ += packets;
  return next_message_seq_++;
}

bool Requester::has_unsent() const { return next_psn_ < end_psn_ || !resend_.empty(); }

bool Requester::ready_to_send() const {
  if (failed()) return false;
  return !resend_.empty() ||
         (next_psn_ < end_psn_ && next_psn_ - acked_psn_ < config_.max_outstanding);
}

const Requester::Message& Requester::message_of(uint64_t psn) const {
  // Messages are sorted by first PSN; the one holding `psn` is the last starting at or before it.
  auto it = std::upper_bound(messages_.begin(), messages_.end(), psn,
                             [](uint64_t p, const Message& m) { return p < m.first_psn; });
  return *std::prev(it);
}

void Requester::fill(Packet& p, const Message& m, uint64_t psn, bool retransmission,
                     bool ack_due) const {
  const uint64_t index = psn - m.first_psn;
  p.type = PacketType::kData;
  p.qpn = remote_qpn_;
  p.psn = psn;
  p.message_seq = m.seq;
  p.message_tag = m.tag;
  p.message_bytes = m.bytes;
  p.message_offset = index * config_.mtu;
  p.payload_bytes = static_cast<uint32_t>(
      std::min<uint64_t>(config_.mtu, m.bytes - std::min(m.bytes, p.message_offset)));
  const bool first = index == 0;
  const bool last = index + 1 == m.packets;
  p.opcode = first && last ? wire::Opcode::kWriteOnly
             : first       ? wire::Opcode::kWriteFirst
             : last        ? wire::Opcode::kWriteLast
                           : wire::Opcode::kWriteMiddle;
  p.ack_request = last || ack_due || retransmission;
  p.ecn_ce = false;
  p.retransmission = retransmission;
  p.sack_psn = 0;
}

Packet Requester::build(uint64_t psn, bool retransmission) const {
  Packet p;
  fill(p, message_of(psn), psn, retransmission, (psn + 1) % config_.ack_every == 0);
  return p;
}

void Requester::note_sent(const Packet& p, Nanos now) {
  if (p.retransmission) {
    ++counters_.retransmitted_packets;
    // Karn's rule: a resent packet's ACK cannot be told from the original's.
    if (probe_psn_ && *probe_psn_ == p.psn) probe_psn_.reset();
  } else if (!probe_psn_) {
    probe_psn_ = p.psn;
    probe_sent_at_ = now;
  }
  ++counters_.packets_sent;
  counters_.bytes_sent += p.payload_bytes;
}

std::optional<Packet> Requester::next_packet(Nanos now) {
  if (failed()) return std::nullopt;
  const bool nothing_outstanding = acked_psn_ >= highest_sent_;
  std::optional<Packet> out;
  while (!resend_.empty() && !out) {
    const uint64_t psn = resend_.front();
    resend_.pop_front();
    if (psn >= acked_psn_ && !sacked_.count(psn)) out = build(psn, true);
  }
  if (!out) {
    if (next_psn_ >= end_psn_ || next_psn_ - acked_psn_ >= config_.max_outstanding) {
      return std::nullopt;
    }
    out = build(next_psn_, next_psn_ < highest_sent_);
    ++next_psn_;
    highest_sent_ = std::max(highest_sent_, next_psn_);
  }
  note_sent(*out, now);
  if (nothing_outstanding) last_progress_ = now;  // the timer starts with the first packet out
  return out;
}

size_t Requester::next_packets(Nanos now, std::span<Packet> out) {
  size_t n = 0;
  // Retransmissions one by one: each needs its own checks, and they are rare.
  while (n < out.size() && !resend_.empty()) {
    auto p = next_packet(now);
    if (!p) return n;
    out[n++] = *p;
  }
  if (failed() || n == out.size() || next_psn_ >= end_psn_) return n;
  const uint64_t window_end = acked_psn_ + config_.max_outstanding;
  const uint64_t stop = std::min({end_psn_, window_end, next_psn_ + (out.size() - n)});
  if (next_psn_ >= stop) return n;
  if (acked_psn_ >= highest_sent_) last_progress_ = now;  // the timer starts with the first out
  // The message holding next_psn_, found once; the burst walks on from it.
  auto message = std::prev(std::upper_bound(
      messages_.begin(), messages_.end(), next_psn_,
      [](uint64_t p, const Message& m) { return p < m.first_psn; }));
  // Packets until the next AckReq of the cadence, counted down instead of a division per packet.
  uint64_t until_ack = config_.ack_every - (next_psn_ + 1) % config_.ack_every;
  if (until_ack == config_.ack_every) until_ack = 0;
  uint64_t bytes = 0;
  const uint32_t mtu = config_.mtu;
  // One run per message: what is the same for its packets is worked out once (fill's fields).
  for (uint64_t psn = next_psn_; psn < stop;) {
    while (psn >= message->first_psn + message->packets) ++message;
    const Message& m = *message;
    const uint64_t message_end = m.first_psn + m.packets;
    const uint64_t run_end = std::min(stop, message_end);
    for (uint64_t offset = (psn - m.first_psn) * mtu; psn < run_end; ++psn, offset += mtu) {
      const bool first = psn == m.first_psn;
      const bool last = psn + 1 == message_end;
      Packet& p = out[n++];
      p.type = PacketType::kData;
      p.qpn = remote_qpn_;
      p.psn = psn;
      p.message_seq = m.seq;
      p.message_tag = m.tag;
      p.message_bytes = m.bytes;
      p.message_offset = offset;
      // Only a message's last packet is short (a zero-byte message's is empty).
      p.payload_bytes = last ? static_cast<uint32_t>(m.bytes - std::min(m.bytes, offset)) : mtu;
      p.opcode = first && last ? wire::Opcode::kWriteOnly
                 : first       ? wire::Opcode::kWriteFirst
                 : last        ? wire::Opcode::kWriteLast
                               : wire::Opcode::kWriteMiddle;
      p.retransmission = psn < highest_sent_;
      p.ack_request = last || until_ack == 0 || p.retransmission;
      p.ecn_ce = false;
      p.sack_psn = 0;
      until_ack = until_ack == 0 ? config_.ack_every - 1 : until_ack - 1;
      bytes += p.payload_bytes;
    }
  }
  // Packets below highest_sent_ were sent before: go-back-N resending them.
  const uint64_t resent = std::min(stop, std::max(highest_sent_, next_psn_)) - next_psn_;
  // The bookkeeping of note_sent, once for the burst.
  counters_.packets_sent += stop - next_psn_;
  counters_.bytes_sent += bytes;
  counters_.retransmitted_packets += resent;
  if (probe_psn_ && *probe_psn_ >= next_psn_ && *probe_psn_ < std::min(stop, highest_sent_)) {
    probe_psn_.reset();  // Karn's rule, as in note_sent
  }
  if (!probe_psn_ && stop > highest_sent_) {
    probe_psn_ = std::max(next_psn_, highest_sent_);  // the burst's first new packet
    probe_sent_at_ = now;
  }
  next_psn_ = stop;
  highest_sent_ = std::max(highest_sent_, next_psn_);
  return n;
}

void Requester::acknowledge_through(uint64_t psn_exclusive, Nanos now) {
  if (psn_exclusive <= acked_psn_) return;
  psn_exclusive = std::min(psn_exclusive, highest_sent_);
  acked_psn_ = psn_exclusive;
  if (probe_psn_ && *probe_psn_ < acked_psn_) {
    const double sample = static_cast<double>(now - probe_sent_at_);
    smoothed_rtt_ns_ = smoothed_rtt_ns_ == 0 ? sample : 0.875 * smoothed_rtt_ns_ + 0.125 * sample;
    probe_psn_.reset();
  }
  last_progress_ = now;
  retries_left_ = config_.retry_count;  // progress resets the retry budget, as on a real HCA
  sacked_.erase(sacked_.begin(), sacked_.lower_bound(acked_psn_));
  last_resent_.erase(last_resent_.begin(), last_resent_.lower_bound(acked_psn_));
  if (next_psn_ < acked_psn_) next_psn_ = acked_psn_;
  while (!messages_.empty()) {
    const Message& m = messages_.front();
    if (m.first_psn + m.packets > acked_psn_) break;
    completions_.push_back({m.seq, m.tag, m.bytes, m.posted_at, now});
    messages_.pop_front();
  }
}

void Requester::on_response(const Packet& r, Nanos now) {
  if (failed()) return;
  switch (r.type) {
    case PacketType::kAck:
      ++counters_.acks;
      acknowledge_through(r.psn + 1, now);
      probe_answered(now, /*later_held=*/false);
      break;
    case PacketType::kNak:
      ++counters_.naks;
      // A PSN sequence error NAK acknowledges everything before the missing PSN.
      acknowledge_through(r.psn, now);
      probe_answered(now, /*later_held=*/true);  // it holds sack_psn
      if (config_.recovery == Recovery::kGoBackN) {
        if (next_psn_ > r.psn) next_psn_ = std::max(r.psn, acked_psn_);
        break;
      }
      // The responder holds sack_psn and misses r.psn: every PSN below sack_psn it has not
      // reported is lost too (IRN's inference). Each is resent once; later NAKs naming a hole
      // again resend it only after a guard of about an RTT, since packets already in flight
      // trigger NAKs of their own.
      if (r.sack_psn > r.psn && r.sack_psn < highest_sent_) sacked_.insert(r.sack_psn);
      queue_resend(r.psn, now);
      for (uint64_t psn = std::max({inferred_through_, acked_psn_, r.psn + 1}); psn < r.sack_psn;
           ++psn) {
        if (!sacked_.count(psn)) queue_resend(psn, now);
      }
      inferred_through_ = std::max(inferred_through_, r.sack_psn);
      break;
    case PacketType::kSack:
      ++counters_.acks;
      on_selective_ack(r, now);
      break;
    case PacketType::kCnp:
      ++counters_.cnps;
      break;
    case PacketType::kData:
      break;
  }
}

void Requester::on_selective_ack(const Packet& r, Nanos now) {
  // A SACK's PSN is the first missing one: everything before it arrived.
  acknowledge_through(r.psn, now);
  probe_answered(now, /*later_held=*/r.sack_bitmap != 0);
  overtaken_.erase(overtaken_.begin(), overtaken_.lower_bound(acked_psn_));
  uint64_t newest = 0;
  for (uint64_t bits = r.sack_bitmap; bits != 0; bits &= bits - 1) {
    const uint64_t psn = r.sack_psn + static_cast<uint64_t>(__builtin_ctzll(bits));
    if (psn < acked_psn_ || psn >= highest_sent_) continue;
    sacked_.insert(psn);
    overtaken_.erase(psn);
    newest = std::max(newest, psn);
  }
  if (newest == 0) return;
  // Every packet sent before the newest SACKed one and not reported is a hole; whether it is
  // lost or only overtaken is decided later, by the reorder window or the packet count.
  for (uint64_t psn = std::max(inferred_through_, acked_psn_); psn < newest; ++psn) {
    if (!sacked_.count(psn) && !last_resent_.count(psn)) overtaken_.emplace(psn, now);
  }
  inferred_through_ = std::max(inferred_through_, newest + 1);
  // A hole resent more than a guard ago and still missing while later packets keep arriving:
  // the resend was lost too. The resent holes are looked over once per guard at most (they may
  // be thousands after an outage, and a SACK comes with nearly every packet).
  if (now >= rearm_at_) {
    const Nanos guard = resend_guard();
    rearm_at_ = UINT64_MAX;
    for (auto& [psn, at] : last_resent_) {
      if (psn < newest && !sacked_.count(psn) && now >= at + guard) queue_resend(psn, now);
      rearm_at_ = std::min(rearm_at_, at + guard);
    }
  }
  resend_lost_holes(now);
}

void Requester::resend_lost_holes(Nanos now) {
  // Packets SACKed below the hole being looked at, counted as the walk goes up: SACKed packets
  // above it are the rest.
  auto below = sacked_.begin();
  size_t sacked_below = 0;
  for (auto it = overtaken_.begin(); it != overtaken_.end();) {
    const uint64_t psn = it->first;
    if (psn < acked_psn_ || sacked_.count(psn)) {
      it = overtaken_.erase(it);
      continue;
    }
    while (below != sacked_.end() && *below < psn) {
      ++below;
      ++sacked_below;
    }
    const bool window_passed = now >= it->second + reorder_window();
    const bool enough_later = sacked_.size() - sacked_below >= config_.reorder_packets;
    // Later holes were overtaken no earlier and by no more packets: none of them is due either.
    if (!window_passed && !enough_later) break;
    queue_resend(psn, now);
    it = overtaken_.erase(it);
  }
}

Nanos Requester::reorder_window() const {
  return std::max(config_.reorder_window_ns, static_cast<Nanos>(smoothed_rtt_ns_ / 4));
}

std::optional<Nanos> Requester::reorder_deadline() const {
  if (overtaken_.empty()) return std::nullopt;
  return overtaken_.begin()->second + reorder_window();
}

void Requester::queue_resend(uint64_t psn, Nanos now) {
  if (psn < acked_psn_ || psn >= highest_sent_ || sacked_.count(psn)) return;
  auto it = last_resent_.find(psn);
  if (it != last_resent_.end() && now < it->second + resend_guard()) return;
  last_resent_[psn] = now;
  rearm_at_ = std::min(rearm_at_, now + resend_guard());
  resend_.push_back(psn);
}

Nanos Requester::resend_guard() const {
  return std::max(config_.sack_retransmit_guard_ns, static_cast<Nanos>(1.5 * smoothed_rtt_ns_));
}

std::optional<Nanos> Requester::hole_deadline() const {
  if (config_.recovery == Recovery::kGoBackN || acked_psn_ >= highest_sent_) {
    return std::nullopt;
  }
  auto it = last_resent_.find(acked_psn_);
  if (it != last_resent_.end()) return it->second + 2 * resend_guard();
  // A loss among the last few packets of a burst leaves nothing behind it to cause a NAK
  // (IRN's RTO_low case): resend the oldest once things have been quiet for a while.
  constexpr uint64_t kFewOutstanding = 3;
  if (highest_sent_ - acked_psn_ <= kFewOutstanding && next_psn_ >= end_psn_) {
    return last_progress_ + 2 * resend_guard();
  }
  return std::nullopt;
}

std::optional<Nanos> Requester::timer_deadline() const {
  if (failed() || acked_psn_ >= highest_sent_) return std::nullopt;
  Nanos deadline = last_progress_ + config_.timeout_ns();
  if (const auto hole = hole_deadline()) deadline = std::min(deadline, *hole);
  if (const auto reorder = reorder_deadline()) deadline = std::min(deadline, *reorder);
  return deadline;
}

void Requester::on_timer(Nanos now) {
  auto deadline = timer_deadline();
  if (!deadline || now < *deadline) return;
  if (auto reorder = reorder_deadline(); reorder && now >= *reorder &&
                                         now < last_progress_ + config_.timeout_ns()) {
    resend_lost_holes(now);
    return;
  }
  if (auto hole = hole_deadline(); hole && now >= *hole &&
                                   now < last_progress_ + config_.timeout_ns()) {
    last_resent_.erase(acked_psn_);
    queue_resend(acked_psn_, now);
    return;
  }
  ++counters_.timeouts;
  if (retries_left_ == 0) {
    failure_ = fmt::format(
        "transport retry counter exceeded: no progress at PSN {} after {} retries of {} us",
        acked_psn_ & wire::kMaxPsn, config_.retry_count, config_.timeout_ns() / 1000);
    return;
  }
  --retries_left_;
  last_progress_ = now;
  // Resend from the oldest unacknowledged packet.
  if (config_.recovery == Recovery::kGoBackN) {
    next_psn_ = acked_psn_;
    return;
  }
  // The oldest is resent alone, as a probe: its answer tells whether the responder lacks only
  // some holes (their own logic resends them) or everything after it (probe_answered).
  last_resent_.erase(acked_psn_);
  queue_resend(acked_psn_, now);
  timeout_probe_ = acked_psn_;
}

void Requester::probe_answered(Nanos now, bool later_held) {
  if (!timeout_probe_ || acked_psn_ <= *timeout_probe_) return;
  const bool lacks_the_rest =
      !later_held && acked_psn_ == *timeout_probe_ + 1 && acked_psn_ < highest_sent_;
  timeout_probe_.reset();
  if (!lacks_the_rest) return;
  for (uint64_t psn = acked_psn_; psn < highest_sent_; ++psn) {
    if (sacked_.count(psn)) continue;
    last_resent_.erase(psn);
    queue_resend(psn, now);
  }
}

std::vector<MessageCompletion> Requester::take_completions() {
  std::vector<MessageCompletion> out;
  out.swap(completions_);
  return out;
}

}  // namespace collide::replayer::transport
