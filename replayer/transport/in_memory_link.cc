#include "replayer/transport/in_memory_link.h"

#include <algorithm>

namespace collide::replayer::transport {

InMemoryLink::InMemoryLink(LinkConfig config) : config_(std::move(config)), rng_(config_.seed) {}

bool InMemoryLink::send(const Packet& p, Nanos now) {
  const Nanos start = std::max(now, busy_until_);
  const auto serialization = static_cast<Nanos>(p.wire_bytes() * 8 / config_.gbps);
  busy_until_ = start + serialization;
  const uint64_t number = offered_++;
  // Draw for every packet, dropped or not, so one packet's fate never shifts another's.
  const bool random_loss = uniform_(rng_) < config_.loss;
  const bool in_blackhole = now >= config_.blackhole_start_ns && now < config_.blackhole_end_ns;
  if (random_loss || in_blackhole || config_.drop_packets.count(number)) {
    ++dropped_;
    return false;
  }
  in_flight_.push_back({busy_until_ + config_.delay_ns, p});
  return true;
}

std::optional<Nanos> InMemoryLink::next_arrival() const {
  if (in_flight_.empty()) return std::nullopt;
  return in_flight_.front().arrival;
}

std::vector<Packet> InMemoryLink::arrivals_until(Nanos now) {
  std::vector<Packet> out;
  while (!in_flight_.empty() && in_flight_.front().arrival <= now) {
    out.push_back(in_flight_.front().packet);
    in_flight_.pop_front();
  }
  return out;
}

}  // namespace collide::replayer::transport
