#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "replayer/transport/packet.h"

namespace collide::replayer::transport {

struct LinkConfig {
  double gbps = 100.0;         // serialization rate
  Nanos delay_ns = 2'000;      // one-way propagation and switching
  double loss = 0.0;           // independent loss probability per packet
  uint64_t seed = 1;
  // Exact losses: numbers of the packets (counting from 0, every packet offered) to drop.
  std::set<uint64_t> drop_packets;
  // A blackhole: everything offered in [start, end) is lost (a link flap's data-plane half).
  Nanos blackhole_start_ns = 0;
  Nanos blackhole_end_ns = 0;
  // Reordering without loss, as per-packet spraying over paths of unequal delay: this share of
  // packets takes a slower path, late by 1 to reorder_max_packets of its own serialization times,
  // so at most that many packets overtake it. Drawn from its own seeded stream (the loss draws
  // stay as they were).
  double reorder = 0.0;
  uint32_t reorder_max_packets = 8;
};

// A one-way link on a virtual clock for deterministic transport tests: packets are serialized at
// the link rate, arrive after the delay, in order unless a seeded share is held back, and are
// lost by a seeded model.
class InMemoryLink {
 public:
  explicit InMemoryLink(LinkConfig config);

  // Offers a packet at `now`; it starts once the transmitter is free (free_at()). Returns false if
  // the loss model dropped it; a dropped packet still took its serialization time.
  bool send(const Packet& p, Nanos now);
  Nanos free_at() const { return busy_until_; }
  std::optional<Nanos> next_arrival() const;
  std::vector<Packet> arrivals_until(Nanos now);

  uint64_t offered() const { return offered_; }
  uint64_t dropped() const { return dropped_; }

 private:
  LinkConfig config_;
  std::mt19937_64 rng_;
  std::mt19937_64 reorder_rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  // By arrival time, then by when sent (packets arriving together keep their order).
  std::map<std::pair<Nanos, uint64_t>, Packet> in_flight_;
  Nanos busy_until_ = 0;
  uint64_t offered_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace collide::replayer::transport
