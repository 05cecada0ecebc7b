#include "orchestrator/testbed/testbed_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/support/status_matchers.h"

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

// The leaf a host NIC's link ends on, and the leaf-side MAC, by the NIC's own MAC.
const PlannedLink* link_of(const TestbedPlan& plan, const HostNic& nic) {
  for (const PlannedLink& l : plan.links) {
    if (l.a.mac == nic.mac) return &l;
  }
  return nullptr;
}

TEST(TestbedPlanTest, RailsPutOneNicOfEveryHostOnEachLeafAllOfOneIndex) {
  auto plan = plan_testbed(spec(4, 4, 4, 2));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->nics.size(), 16u);
  std::map<std::string, std::set<uint32_t>> hosts_of_leaf, nic_indices_of_leaf;
  std::map<std::string, uint32_t> host_ports_of_leaf;
  for (const HostNic& nic : plan->nics) {
    const PlannedLink* l = link_of(*plan, nic);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->a.netns, "tb-h" + std::to_string(nic.host));
    EXPECT_EQ(l->a.ifname, "eth" + std::to_string(nic.nic));
    EXPECT_EQ(l->b.mac, nic.gateway_mac);
    EXPECT_TRUE(hosts_of_leaf[l->b.netns].insert(nic.host).second) << "two NICs of one host on " << l->b.netns;
    nic_indices_of_leaf[l->b.netns].insert(nic.nic);
    ++host_ports_of_leaf[l->b.netns];
    // Each NIC's rank subnet is its own /27, routed by its leaf.
    EXPECT_EQ(nic.rank_subnet, fmt::format("198.19.{}.{}/27", nic.host, nic.nic * 32));
    bool routed = false;
    for (const PlannedRoute& r : plan->routes) {
      if (r.netns == l->b.netns && r.prefix == nic.rank_subnet) {
        routed = true;
        EXPECT_EQ(r.via, std::vector<std::string>{l->a.address.substr(0, l->a.address.find('/'))});
      }
    }
    EXPECT_TRUE(routed) << nic.rank_subnet;
  }
  ASSERT_EQ(hosts_of_leaf.size(), 4u);
  for (uint32_t leaf = 0; leaf < 4; ++leaf) {
    const std::string ns = "tb-leaf" + std::to_string(leaf);
    EXPECT_EQ(hosts_of_leaf[ns], (std::set<uint32_t>{0, 1, 2, 3})) << ns;
    EXPECT_EQ(nic_indices_of_leaf[ns], std::set<uint32_t>{leaf}) << ns;
    EXPECT_EQ(host_ports_of_leaf[ns], 4u);
  }
  // Every leaf reaches both spines; every spine routes all 16 NIC subnets.
  EXPECT_EQ(plan->links.size(), 16u + 4 * 2);
  for (uint32_t s = 0; s < 2; ++s) {
    std::set<std::string> routed;
    for (const PlannedRoute& r : plan->routes) {
      if (r.netns == "tb-spine" + std::to_string(s)) routed.insert(r.prefix);
    }
    EXPECT_EQ(routed.size(), 16u);
  }
}

TEST(TestbedPlanTest, RailGroupsSplitHostsAcrossLeafGroups) {
  // 4 hosts x 2 NICs on 4 leaves: two rail groups; hosts 0 and 2 on leaves 0/1, hosts 1 and 3 on 2/3.
  auto plan = plan_testbed(spec(4, 2, 4, 1));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  for (const HostNic& nic : plan->nics) {
    const PlannedLink* l = link_of(*plan, nic);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->b.netns, "tb-leaf" + std::to_string((nic.host % 2) * 2 + nic.nic))
        << "host " << nic.host << " nic " << nic.nic;
  }
}

TEST(TestbedPlanTest, OneNicPerHostKeepsHostOnLeafHostModLeaves) {
  auto plan = plan_testbed(spec(5, 1, 3, 1));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  for (const HostNic& nic : plan->nics) {
    EXPECT_EQ(link_of(*plan, nic)->b.netns, "tb-leaf" + std::to_string(nic.host % 3));
  }
}

TEST(TestbedPlanTest, RefusesLeavesThatCannotBeRails) {
  for (auto [nics, leaves] : {std::pair{4u, 2u}, {4u, 6u}, {2u, 3u}}) {
    auto plan = plan_testbed(spec(4, nics, leaves, 2));
    ASSERT_THAT(plan, StatusIs(StatusCode::kInvalidArgument))
        << nics << " NICs on " << leaves << " leaves";
    EXPECT_NE(plan.status().message().find("multiple of nics_per_host"), std::string::npos)
        << plan.status().message();
  }
}

TEST(TestbedPlanTest, RankAddressesFollowHostAndNic) {
  EXPECT_EQ(rank_address(0, 0, 0), (198u << 24) | (19u << 16) | 1u);
  EXPECT_EQ(rank_address(3, 1, 2), (198u << 24) | (19u << 16) | (3u << 8) | 35u);
  auto plan = plan_testbed(spec(2, 1, 1, 0));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->nics[1].rank_subnet, "198.19.1.0/27");
}

TEST(TestbedPlanTest, RejectsImpossibleSpecs) {
  EXPECT_THAT(plan_testbed(spec(0, 1, 1, 0)), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(plan_testbed(spec(2, 9, 1, 0)), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(plan_testbed(spec(2, 1, 2, 0)),
              StatusIs(StatusCode::kInvalidArgument));  // two leaves, nothing joins them
  auto bad_name = spec(2, 1, 1, 0);
  bad_name.set_name("Bad-Name");
  EXPECT_THAT(plan_testbed(bad_name), StatusIs(StatusCode::kInvalidArgument));
  auto bad_mtu = spec(2, 1, 1, 0);
  bad_mtu.set_mtu(100);
  EXPECT_THAT(plan_testbed(bad_mtu), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::orchestrator::testbed
