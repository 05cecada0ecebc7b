#include "replayer/transport/in_memory_link.h"

#include <algorithm>

namespace collide::replayer::transport {

InMemoryLink::InMemoryLink(LinkConfig config)
    : config_(std::move(config)), rng_(config_.seed), reorder_rng_(~config_.seed) {}

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
  Nanos late = 0;
  if (config_.reorder > 0 && uniform_(reorder_rng_) < config_.reorder) {
    std::uniform_int_distribution<uint32_t> slots(1, std::max<uint32_t>(1, config_.reorder_max_packets));
    late = slots(reorder_rng_) * serialization;
  }
  in_flight_.emplace(std::make_pair(busy_until_ + config_.delay_ns + late, number), p);
  return true;
}

std::optional<Nanos> InMemoryLink::next_arrival() const {
  if (in_flight_.empty()) return std::nullopt;
  return in_flight_.begin()->first.first;
}

std::vector<Packet> InMemoryLink::arrivals_until(Nanos now) {
  std::vector<Packet> out;
  while (!in_flight_.empty() && in_flight_.begin()->first.first <= now) {
    out.push_back(in_flight_.begin()->second);
    in_flight_.erase(in_flight_.begin());
  }
  return out;
}

}  // namespace collide::replayer::transport
