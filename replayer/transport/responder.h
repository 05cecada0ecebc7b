#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "replayer/transport/packet.h"
#include "replayer/transport/qp_config.h"

namespace collide::replayer::transport {

struct ResponderCounters {
  uint64_t packets_received = 0;
  uint64_t bytes_received = 0;    // payload of packets accepted (each byte once)
  uint64_t duplicates = 0;        // packets it already had (below the expected PSN, or kept)
  uint64_t out_of_order = 0;      // beyond the expected PSN: dropped (go-back-N) or kept
  uint64_t naks_sent = 0;
  uint64_t acks_sent = 0;
  uint64_t cnps_sent = 0;
  uint64_t ecn_marked = 0;

  ResponderCounters& operator+=(const ResponderCounters& o) {
    packets_received += o.packets_received;
    bytes_received += o.bytes_received;
    duplicates += o.duplicates;
    out_of_order += o.out_of_order;
    naks_sent += o.naks_sent;
    acks_sent += o.acks_sent;
    cnps_sent += o.cnps_sent;
    ecn_marked += o.ecn_marked;
    return *this;
  }
};

struct MessageDelivery {
  uint64_t message_seq = 0;
  uint64_t tag = 0;  // from the message's first packet
  uint64_t bytes = 0;
  Nanos delivered_at = 0;
};

// The receiving half of a reliable connected queue pair. Accepts packets in PSN order (go-back-N
// drops anything past a gap and NAKs the gap once; selective repeat keeps it and NAKs with the
// PSN that arrived; out-of-order mode keeps it and answers with a selective ACK, never a NAK),
// ACKs when asked, answers duplicates so lost ACKs are recovered, and sends a CNP for ECN-marked
// packets at most once per CNP interval. Kept packets count as delivered when the hole before
// them fills: a NIC places them at once, but completes messages in order all the same.
class Responder {
 public:
  Responder(uint32_t remote_qpn, QpConfig config, Nanos cnp_interval_ns = 50'000);

  // Handles one data packet; returns what to send back (ACK/NAK and/or CNP), in order.
  std::vector<Packet> on_packet(const Packet& p, Nanos now);

  // Messages whose every byte arrived, in order, since the last call.
  std::vector<MessageDelivery> take_deliveries();

  uint64_t expected_psn() const { return expected_psn_; }
  const ResponderCounters& counters() const { return counters_; }

 private:
  Packet response(PacketType type, uint64_t psn) const;
  // The acknowledgement of what is held: a plain ACK, or in out-of-order mode while packets wait
  // behind a hole, a selective ACK.
  Packet held_response();
  // Out-of-order mode: a SACK whose bitmap describes the 64 PSNs from `first` (beyond the hole).
  Packet selective_ack(uint64_t first);
  void accept(const Packet& p, Nanos now);

  uint32_t remote_qpn_;
  QpConfig config_;
  Nanos cnp_interval_ns_;
  std::optional<Nanos> last_cnp_;
  uint64_t expected_psn_ = 0;
  bool nak_sent_for_gap_ = false;   // go-back-N: one NAK per gap
  std::map<uint64_t, Packet> held_;  // selective repeat, out-of-order: packets kept past a hole
  std::vector<MessageDelivery> deliveries_;
  uint64_t message_bytes_so_far_ = 0;
  uint64_t message_tag_ = 0;
  uint64_t messages_delivered_ = 0;
  ResponderCounters counters_;
};

}  // namespace collide::replayer::transport
