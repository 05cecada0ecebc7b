#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "replayer/transport/packet.h"
#include "replayer/transport/qp_config.h"

namespace collide::replayer::transport {

struct RequesterCounters {
  uint64_t packets_sent = 0;       // including retransmissions
  uint64_t bytes_sent = 0;         // payload bytes, including retransmissions
  uint64_t retransmitted_packets = 0;
  uint64_t acks = 0;
  uint64_t naks = 0;
  uint64_t timeouts = 0;
  uint64_t cnps = 0;

  RequesterCounters& operator+=(const RequesterCounters& o) {
    packets_sent += o.packets_sent;
    bytes_sent += o.bytes_sent;
    retransmitted_packets += o.retransmitted_packets;
    acks += o.acks;
    naks += o.naks;
    timeouts += o.timeouts;
    cnps += o.cnps;
    return *this;
  }
};

struct MessageCompletion {
  uint64_t message_seq = 0;
  uint64_t tag = 0;
  uint64_t bytes = 0;
  Nanos posted_at = 0;
  Nanos completed_at = 0;
};

// The sending half of a reliable connected queue pair: cuts posted RDMA WRITE messages into MTU
// packets with consecutive PSNs, asks for ACKs every few packets, and recovers from loss by
// go-back-N, selective repeat or, tolerating reordering, from selective ACKs, with NCCL's timeout
// and retry semantics. Pure: the caller passes
// the time and moves packets.
class Requester {
 public:
  Requester(uint32_t remote_qpn, QpConfig config);

  // Queues a message; returns its sequence number. `tag` travels with the message (in the RETH)
  // so the receiver knows which of its transfers it completes.
  uint64_t post(uint64_t bytes, Nanos now, uint64_t tag = 0);

  // The next packet to transmit (a retransmission first), or nothing when all is sent or the
  // window of outstanding packets is full.
  std::optional<Packet> next_packet(Nanos now);
  // Up to out.size() packets at once, the same ones next_packet would return one by one; returns
  // how many. New packets of a burst come from one walk over the messages, with no per-packet
  // search or division: a sender at line rate spends its time on frames, not on this.
  size_t next_packets(Nanos now, std::span<Packet> out);
  // An ACK, NAK or CNP from the responder.
  void on_response(const Packet& response, Nanos now);
  // Call at or after timer_deadline(): a retransmission timeout or, after the last retry, failure.
  void on_timer(Nanos now);
  // When on_timer must next run; nullopt while nothing is outstanding.
  std::optional<Nanos> timer_deadline() const;

  // Messages whose every packet is acknowledged, in order, since the last call.
  std::vector<MessageCompletion> take_completions();

  bool idle() const { return messages_.empty(); }
  // Every PSN below this one is acknowledged (the reference for unwrapping response PSNs).
  uint64_t acked_psn() const { return acked_psn_; }
  bool has_unsent() const;
  // Whether next_packet would return a packet now (something unsent and room in the window).
  bool ready_to_send() const;
  bool failed() const { return !failure_.empty(); }
  // Why the QP failed, phrased as NCCL reports it.
  const std::string& failure() const { return failure_; }
  const RequesterCounters& counters() const { return counters_; }
  // Smoothed round-trip time; 0 until measured.
  Nanos smoothed_rtt_ns() const { return static_cast<Nanos>(smoothed_rtt_ns_); }
  const QpConfig& config() const { return config_; }

 private:
  struct Message {
    uint64_t seq;
    uint64_t tag;
    uint64_t bytes;
    uint64_t first_psn;
    uint64_t packets;
    Nanos posted_at;
  };

  Packet build(uint64_t psn, bool retransmission) const;
  // Fills `p` as packet `psn` of message `m`; `ack_due` says whether the AckReq cadence asks.
  void fill(Packet& p, const Message& m, uint64_t psn, bool retransmission, bool ack_due) const;
  // The bookkeeping of sending `p` (counters, RTT probe).
  void note_sent(const Packet& p, Nanos now);
  const Message& message_of(uint64_t psn) const;
  void acknowledge_through(uint64_t psn_exclusive, Nanos now);
  // Selective repeat: queue `psn` for resending unless it was resent less than a guard ago.
  void queue_resend(uint64_t psn, Nanos now);
  Nanos resend_guard() const;
  // Selective repeat and out-of-order: when the oldest hole, already resent, is due to be resent
  // again because nothing more arrived to report it (IRN's short timer; it does not use up
  // NCCL's retries).
  std::optional<Nanos> hole_deadline() const;
  // After a timeout, the answer to the oldest packet resent as a probe: acknowledging it and
  // nothing after it, with nothing later held (`later_held`), it says the responder lacks every
  // later packet too (a whole window lost to an outage, with no later packet to report the
  // holes): all of them are resent at once rather than one per timeout.
  void probe_answered(Nanos now, bool later_held);
  // Out-of-order mode: a selective ACK's news, and the holes it shows lost.
  void on_selective_ack(const Packet& sack, Nanos now);
  void resend_lost_holes(Nanos now);
  Nanos reorder_window() const;
  // When the oldest hole overtaken by a SACKed packet is due to be taken for lost.
  std::optional<Nanos> reorder_deadline() const;

  uint32_t remote_qpn_;
  QpConfig config_;
  std::deque<Message> messages_;  // posted and not fully acknowledged
  uint64_t next_message_seq_ = 0;
  uint64_t end_psn_ = 0;       // one past the last PSN of all posted messages
  uint64_t next_psn_ = 0;      // next PSN to send (go-back-N rewinds it)
  uint64_t highest_sent_ = 0;  // one past the highest PSN ever sent
  uint64_t acked_psn_ = 0;     // every PSN below it is acknowledged
  // Selective repeat: PSNs the responder holds beyond acked_psn_, holes to resend, when each hole
  // was last queued, and how far holes have been inferred from the responder's reports.
  std::set<uint64_t> sacked_;
  std::deque<uint64_t> resend_;
  std::map<uint64_t, Nanos> last_resent_;
  uint64_t inferred_through_ = 0;
  // Out-of-order mode: holes a later packet has overtaken (it was SACKed), with when that was
  // first learnt; PSN order is also time order. A hole leaves when it arrives or is resent.
  std::map<uint64_t, Nanos> overtaken_;
  Nanos rearm_at_ = 0;  // when a resent hole may next be due for resending again
  // Round-trip time, sampled from one probe packet at a time (as TCP times one segment).
  std::optional<uint64_t> probe_psn_;
  Nanos probe_sent_at_ = 0;
  double smoothed_rtt_ns_ = 0;
  Nanos last_progress_ = 0;
  std::optional<uint64_t> timeout_probe_;  // the PSN resent alone after a timeout, until answered
  uint32_t retries_left_;
  std::vector<MessageCompletion> completions_;
  RequesterCounters counters_;
  std::string failure_;
};

}  // namespace collide::replayer::transport
