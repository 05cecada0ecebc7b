#include "replayer/transport/loopback_transfer.h"

#include <algorithm>

namespace collide::replayer::transport {

double TransferResult::goodput_gbps() const {
  return elapsed_ns == 0 ? 0.0 : static_cast<double>(bytes) * 8 / static_cast<double>(elapsed_ns);
}

TransferResult run_loopback_transfer(const QpConfig& qp, const LinkConfig& data_config,
                                     const LinkConfig& ack_config,
                                     const std::vector<uint64_t>& messages, Nanos time_limit_ns) {
  constexpr uint32_t kQpn = 0x11;
  Requester requester(kQpn, qp);
  Responder responder(kQpn, qp);
  InMemoryLink data(data_config);
  InMemoryLink acks(ack_config);
  TransferResult result;

  Nanos now = 0;
  for (uint64_t bytes : messages) requester.post(bytes, now);
  while (now <= time_limit_ns) {
    while (data.free_at() <= now) {
      auto packet = requester.next_packet(now);
      if (!packet) break;
      data.send(*packet, now);
    }
    for (const Packet& p : data.arrivals_until(now)) {
      // Responses queue behind each other on the return link.
      for (const Packet& r : responder.on_packet(p, now)) acks.send(r, now);
    }
    for (const Packet& r : acks.arrivals_until(now)) requester.on_response(r, now);
    requester.on_timer(now);
    for (const MessageCompletion& c : requester.take_completions()) {
      result.bytes += c.bytes;
      result.elapsed_ns = c.completed_at;
      result.completions.push_back(c);
    }
    if (requester.idle() || requester.failed()) break;

    // Jump to the next thing that can happen.
    Nanos next = time_limit_ns + 1;
    if (auto t = data.next_arrival()) next = std::min(next, *t);
    if (auto t = acks.next_arrival()) next = std::min(next, *t);
    if (auto t = requester.timer_deadline()) next = std::min(next, *t);
    if (requester.ready_to_send()) next = std::min(next, std::max(now + 1, data.free_at()));
    if (next <= now) next = now + 1;
    now = next;
  }
  result.completed = requester.idle();
  result.failure = requester.failure();
  if (!result.completed) result.elapsed_ns = std::min(now, time_limit_ns);
  result.data_packets_dropped = data.dropped();
  result.acks_dropped = acks.dropped();
  result.requester = requester.counters();
  result.responder = responder.counters();
  return result;
}

}  // namespace collide::replayer::transport
