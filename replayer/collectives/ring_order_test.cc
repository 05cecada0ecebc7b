#include "replayer/collectives/ring_order.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/status_matchers.h"

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

// Hops of the ring between hosts under different leaves: the ones that climb to the spines.
size_t leaf_crossings(const std::vector<uint32_t>& order, const Placement& p) {
  size_t n = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t from = order[i], to = order[(i + 1) % order.size()];
    n += p.leaf_of_host[p.host_of_rank[from]] != p.leaf_of_host[p.host_of_rank[to]];
  }
  return n;
}

// 4 hosts x 2 ranks, host h under leaf h % 2 (the virtual testbed's cabling with 2 leaves).
Placement two_leaves() {
  Placement p = *Placement::uniform(8, 2, 1);
  p.leaf_of_host = {0, 1, 0, 1};
  return p;
}

TEST(RingOrderTest, RankOrderCrossesTheSpinesAtEveryHostOfAnotherLeaf) {
  const Placement p = two_leaves();
  auto order = ring_order(world(8), p, 0, RingOrder::kRank);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(leaf_crossings(*order, p), 4u);
}

TEST(RingOrderTest, TopologyOrderKeepsTheHostsOfALeafTogether) {
  const Placement p = two_leaves();
  for (uint32_t channel = 0; channel < 2; ++channel) {
    auto order = ring_order(world(8), p, channel, RingOrder::kTopology);
    ASSERT_TRUE(order.ok()) << order.status().to_string();
    // Leaf 0's hosts 0 and 2, then leaf 1's hosts 1 and 3, each host's ranks together.
    EXPECT_EQ(*order, (std::vector<uint32_t>{0, 1, 4, 5, 2, 3, 6, 7}));
    EXPECT_EQ(leaf_crossings(*order, p), 2u);
  }
}

TEST(RingOrderTest, TopologyOrderOfASubGroupOrdersItsOwnLeaves) {
  // Hosts 1..3 only (ranks 2..7): leaf 1 comes first, as host 1 does in rank order.
  Placement p = two_leaves();
  v1::Communicator c;
  c.set_id("dp");
  for (uint32_t r = 2; r < 8; ++r) c.add_ranks(r);
  auto order = ring_order(c, p, 0, RingOrder::kTopology);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<uint32_t>{2, 3, 6, 7, 4, 5}));
}

TEST(RingOrderTest, TopologyOrderWithoutLeavesIsRefused) {
  const auto p = *Placement::uniform(8, 2, 1);
  auto order = ring_order(world(8), p, 0, RingOrder::kTopology);
  ASSERT_THAT(order, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(order.status().message().find("leaf of every host"), std::string::npos);
}

TEST(RingOrderTest, ARecordedRingWinsOverTheTopologyOrder) {
  v1::Communicator c = world(4);
  v1::RingOrder* ring = c.add_rings();
  for (uint32_t r : {2u, 0u, 3u, 1u}) ring->add_ranks(r);
  auto order = ring_order(c, *Placement::uniform(4, 1, 1), 0, RingOrder::kTopology);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<uint32_t>{2, 0, 3, 1}));
}

}  // namespace
}  // namespace collide::replayer::collectives
