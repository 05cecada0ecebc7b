#include "replayer/collectives/ring_order.h"

#include <set>

#include <gtest/gtest.h>

namespace collide::replayer::collectives {
namespace {

v1::Communicator world(uint32_t n) {
  v1::Communicator c;
  c.set_id("world");
  for (uint32_t r = 0; r < n; ++r) c.add_ranks(r);
  return c;
}

// The NICs the ring's host-to-host hops leave from and arrive at, as (sender NIC, receiver NIC).
std::set<std::pair<uint32_t, uint32_t>> crossings(const std::vector<uint32_t>& order,
                                                  const Placement& p) {
  std::set<std::pair<uint32_t, uint32_t>> out;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t from = order[i], to = order[(i + 1) % order.size()];
    if (!p.same_host(from, to)) out.insert({p.nic_of_rank[from], p.nic_of_rank[to]});
  }
  return out;
}

TEST(RingOrderTest, EachChannelEntersTheHostsOnItsOwnRail) {
  // 3 hosts x 4 NICs, one rank per NIC: channel c enters every host on NIC c mod 4.
  const auto p = *Placement::uniform(12, 4, 4);
  for (uint32_t channel = 0; channel < 8; ++channel) {
    auto order = ring_order(world(12), p, channel);
    ASSERT_TRUE(order.ok()) << order.status().to_string();
    ASSERT_EQ(order->size(), 12u);
    const uint32_t rail = channel % 4;
    // Hosts stay contiguous, each entered on the channel's rail and left from the rail before it.
    for (uint32_t h = 0; h < 3; ++h) {
      EXPECT_EQ(p.host_of_rank[(*order)[4 * h]], h);
      EXPECT_EQ(p.nic_of_rank[(*order)[4 * h]], rail) << "channel " << channel;
    }
    EXPECT_EQ(crossings(*order, p),
              (std::set<std::pair<uint32_t, uint32_t>>{{(rail + 3) % 4, rail}}))
        << "channel " << channel;
  }
}

TEST(RingOrderTest, OneNicPerHostKeepsRankOrder) {
  const auto p = *Placement::uniform(8, 4, 1);
  for (uint32_t channel = 0; channel < 3; ++channel) {
    auto order = ring_order(world(8), p, channel);
    ASSERT_TRUE(order.ok());
    EXPECT_EQ(*order, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  }
}

TEST(RingOrderTest, ARecordedRingIsKeptAsIs) {
  v1::Communicator c = world(4);
  v1::RingOrder* ring = c.add_rings();
  for (uint32_t r : {2u, 0u, 3u, 1u}) ring->add_ranks(r);
  auto order = ring_order(c, *Placement::uniform(4, 2, 2), 1);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<uint32_t>{2, 0, 3, 1}));
}

}  // namespace
}  // namespace collide::replayer::collectives
