#include "orchestrator/testbed/testbed_plan.h"

#include <set>

#include <gtest/gtest.h>

namespace collide::orchestrator::testbed {
namespace {

v1::VirtualTestbedSpec spec(uint32_t hosts, uint32_t nics, uint32_t leaves, uint32_t spines) {
  v1::VirtualTestbedSpec s;
  s.set_name("tb");
  s.set_hosts(hosts);
  s.set_nics_per_host(nics);
  s.set_leaves(leaves);
  s.set_spines(spines);
  return s;
}

TEST(TestbedPlanTest, LeafSpineHasEveryLinkAddressMacAndRoute) {
  auto plan = plan_testbed(spec(4, 2, 2, 2));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan->namespaces.size(), 4u + 2 + 2);
  EXPECT_EQ(plan->links.size(), 4u * 2 + 2 * 2);
  EXPECT_EQ(plan->nics.size(), 8u);
  std::set<std::string> addresses, macs, names;
  for (const PlannedLink& l : plan->links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      EXPECT_TRUE(addresses.insert(e->address).second) << e->address;
      EXPECT_TRUE(macs.insert(e->mac).second) << e->mac;
      EXPECT_TRUE(names.insert(e->netns + "/" + e->ifname).second);
      EXPECT_LE(e->ifname.size(), 15u);
    }
  }
  // Rail alignment: NIC n of every host on leaf n.
  for (const HostNic& nic : plan->nics) {
    bool found = false;
    for (const PlannedLink& l : plan->links) {
      if (l.a.mac == nic.mac) {
        found = true;
        EXPECT_EQ(l.b.netns, "tb-leaf" + std::to_string(nic.nic));
        EXPECT_EQ(l.b.mac, nic.gateway_mac);
      }
    }
    EXPECT_TRUE(found);
  }
  // Every spine routes every host NIC's rank subnet; every leaf spreads the rest over 2 spines.
  for (uint32_t s = 0; s < 2; ++s) {
    std::set<std::string> routed;
    for (const PlannedRoute& r : plan->routes) {
      if (r.netns == "tb-spine" + std::to_string(s)) routed.insert(r.prefix);
    }
    EXPECT_EQ(routed.size(), 8u);
  }
  for (const PlannedRoute& r : plan->routes) {
    if (r.prefix == "198.19.0.0/16") {
      EXPECT_EQ(r.via.size(), 2u);
    }
  }
  EXPECT_EQ(plan->neighbors.size(), 8u);
}

TEST(TestbedPlanTest, RankAddressesFollowHostAndNic) {
  EXPECT_EQ(rank_address(0, 0, 0), (198u << 24) | (19u << 16) | 1u);
  EXPECT_EQ(rank_address(3, 1, 2), (198u << 24) | (19u << 16) | (3u << 8) | 35u);
  auto plan = plan_testbed(spec(2, 1, 1, 0));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->nics[1].rank_subnet, "198.19.1.0/27");
}

TEST(TestbedPlanTest, RejectsImpossibleSpecs) {
  EXPECT_FALSE(plan_testbed(spec(0, 1, 1, 0)).ok());
  EXPECT_FALSE(plan_testbed(spec(2, 9, 1, 0)).ok());
  EXPECT_FALSE(plan_testbed(spec(2, 1, 2, 0)).ok());  // two leaves, nothing joins them
  auto bad_name = spec(2, 1, 1, 0);
  bad_name.set_name("Bad-Name");
  EXPECT_FALSE(plan_testbed(bad_name).ok());
  auto bad_mtu = spec(2, 1, 1, 0);
  bad_mtu.set_mtu(100);
  EXPECT_FALSE(plan_testbed(bad_mtu).ok());
}

}  // namespace
}  // namespace collide::orchestrator::testbed
