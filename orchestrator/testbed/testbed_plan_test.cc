#include "orchestrator/testbed/testbed_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "orchestrator/testbed/port_queue.h"
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

TEST(TestbedPlanTest, ANamespaceNameSaysItsTestbedAndRole) {
  for (const auto& [name, testbed, role] :
       {std::tuple{"demo-h0", "demo", Role::kHost}, std::tuple{"my-bed-leaf12", "my-bed", Role::kLeaf},
        std::tuple{"x-spine1", "x", Role::kSpine}, std::tuple{"x-super0", "x", Role::kSuperSpine}}) {
    auto of = namespace_of_testbed(name);
    ASSERT_TRUE(of.has_value()) << name;
    EXPECT_EQ(of->testbed, testbed);
    EXPECT_EQ(of->role, role) << name;
  }
  for (const char* other : {"demo", "-leaf0", "demo-hello", "demo-leaf", "demo-spine0x", "ns1"}) {
    EXPECT_FALSE(namespace_of_testbed(other).has_value()) << other;
  }
}

TEST(TestbedPlanTest, ARouteIsOneLineOfIpBatch) {
  EXPECT_EQ(route_replace_line({"tb-leaf0", "198.18.0.0/16", {"10.0.0.1"}}), "route replace 198.18.0.0/16 via 10.0.0.1");
  EXPECT_EQ(route_replace_line({"tb-leaf0", "198.18.0.0/16", {"10.0.0.1", "10.0.0.3"}}),
            "route replace 198.18.0.0/16 nexthop via 10.0.0.1 nexthop via 10.0.0.3");
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

// 8 hosts, 2 pods of 2 leaves and 2 spines each, 2 super-spines.
v1::VirtualTestbedSpec three_tier() {
  v1::VirtualTestbedSpec s = spec(8, 1, 4, 4);
  s.set_pods(2);
  s.set_super_spines(2);
  s.set_super_link_gbps(40);
  return s;
}

std::vector<std::string> via_of(const TestbedPlan& plan, const std::string& netns, const std::string& prefix) {
  for (const PlannedRoute& r : plan.routes) {
    if (r.netns == netns && r.prefix == prefix) return r.via;
  }
  return {};
}

TEST(TestbedPlanTest, PodsJoinedBySuperSpinesKeepEachLeafOnItsPodsSpines) {
  auto plan = plan_testbed(three_tier());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan->namespaces.size(), 8u + 4 + 4 + 2);
  // Host links, each leaf to its pod's 2 spines, each spine to both super-spines.
  EXPECT_EQ(plan->links.size(), 8u + 4 * 2 + 4 * 2);
  std::map<std::string, uint32_t> pod;
  for (const PlannedNamespace& ns : plan->namespaces) pod[ns.name] = ns.pod;
  EXPECT_EQ(pod["tb-leaf1"], 0u);
  EXPECT_EQ(pod["tb-leaf2"], 1u);
  EXPECT_EQ(pod["tb-spine3"], 1u);
  std::set<std::string> addresses, macs;
  for (const PlannedLink& l : plan->links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      EXPECT_TRUE(addresses.insert(e->address).second) << e->address;
      EXPECT_TRUE(macs.insert(e->mac).second) << e->mac;
    }
    if (l.a.netns.find("leaf") != std::string::npos) {
      EXPECT_EQ(pod[l.a.netns], pod[l.b.netns]) << l.a.netns << " cabled to " << l.b.netns;
      EXPECT_EQ(l.a.queue.tier, kTierLeafUp);
    }
    if (l.b.netns.find("super") != std::string::npos) {
      EXPECT_EQ(l.a.queue.tier, kTierSpineUp);
      EXPECT_EQ(l.b.queue.tier, kTierSuperDown);
      EXPECT_DOUBLE_EQ(l.gbps, 40);
    }
  }
  // Leaf 2 (pod 1) spreads everything over spines 2 and 3; they route pod 1's hosts down and the
  // rest up over both super-spines; each super-spine reaches host 0 (leaf 0, pod 0) over spines 0
  // and 1 only.
  EXPECT_EQ(via_of(*plan, "tb-leaf2", "198.19.0.0/16").size(), 2u);
  for (const std::string& hop : via_of(*plan, "tb-leaf2", "198.19.0.0/16")) {
    bool on_pod_1 = false;
    for (const PlannedLink& l : plan->links) {
      if (bare_address(l.b.address) == hop) on_pod_1 = l.b.netns == "tb-spine2" || l.b.netns == "tb-spine3";
    }
    EXPECT_TRUE(on_pod_1) << hop;
  }
  const std::string host0 = plan->nics[0].rank_subnet, host2 = plan->nics[2].rank_subnet;
  EXPECT_EQ(via_of(*plan, "tb-spine2", host2).size(), 1u);   // down to leaf 2
  EXPECT_TRUE(via_of(*plan, "tb-spine2", host0).empty());    // not its pod's
  EXPECT_EQ(via_of(*plan, "tb-spine2", "198.19.0.0/16").size(), 2u);  // up, over both super-spines
  for (const char* super : {"tb-super0", "tb-super1"}) {
    const std::vector<std::string> down = via_of(*plan, super, host0);
    ASSERT_EQ(down.size(), 2u) << super;
    for (const std::string& hop : down) {
      bool pod_0_spine = false;
      for (const PlannedLink& l : plan->links) {
        if (bare_address(l.a.address) == hop) pod_0_spine = l.a.netns == "tb-spine0" || l.a.netns == "tb-spine1";
      }
      EXPECT_TRUE(pod_0_spine) << super << " via " << hop;
    }
  }
}

TEST(TestbedPlanTest, WithPodsEachSwitchHashesWithAKeyOfItsOwnUnlessShared) {
  auto plan = plan_testbed(three_tier());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  std::set<uint32_t> seeds;
  for (const PlannedNamespace& ns : plan->namespaces) {
    if (ns.role == Role::kHost) {
      EXPECT_EQ(ns.hash_seed, 0u) << ns.name;
    } else {
      EXPECT_NE(ns.hash_seed, 0u) << ns.name;
      EXPECT_TRUE(seeds.insert(ns.hash_seed).second) << ns.name;
    }
  }
  auto shared = three_tier();
  shared.set_shared_hash_seed(true);
  auto one_key = plan_testbed(shared);
  ASSERT_TRUE(one_key.ok()) << one_key.status().to_string();
  for (const PlannedNamespace& ns : one_key->namespaces) EXPECT_EQ(ns.hash_seed, 0u) << ns.name;
  // Only the leaves choose among next hops in a 2-tier fabric: the kernel's one key serves.
  auto two_tier = plan_testbed(spec(4, 1, 2, 2));
  ASSERT_TRUE(two_tier.ok()) << two_tier.status().to_string();
  for (const PlannedNamespace& ns : two_tier->namespaces) EXPECT_EQ(ns.hash_seed, 0u) << ns.name;
}

TEST(TestbedPlanTest, PlanesGiveEachRailAFabricOfItsOwn) {
  // 4 hosts x 2 NICs, 2 rail groups of 2 leaves, 4 spines in 2 planes: rail 0 (leaves 0 and 2)
  // on spines 0-1, rail 1 (leaves 1 and 3) on spines 2-3.
  auto s = spec(4, 2, 4, 4);
  s.set_planes(2);
  auto plan = plan_testbed(s);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan->links.size(), 8u + 4 * 2);
  std::map<std::string, uint32_t> plane;
  for (const PlannedNamespace& ns : plan->namespaces) plane[ns.name] = ns.plane;
  EXPECT_EQ(plane["tb-leaf2"], 0u);
  EXPECT_EQ(plane["tb-leaf3"], 1u);
  EXPECT_EQ(plane["tb-spine1"], 0u);
  EXPECT_EQ(plane["tb-spine2"], 1u);
  for (const PlannedLink& l : plan->links) {
    if (l.b.netns.find("spine") != std::string::npos) {
      EXPECT_EQ(plane[l.a.netns], plane[l.b.netns]) << l.a.netns << " cabled to " << l.b.netns;
    }
  }
  // A plane's spines route only the rank subnets of its rail's NICs.
  for (const HostNic& nic : plan->nics) {
    EXPECT_EQ(via_of(*plan, nic.nic == 0 ? "tb-spine0" : "tb-spine2", nic.rank_subnet).size(), 1u) << nic.rank_subnet;
    EXPECT_TRUE(via_of(*plan, nic.nic == 0 ? "tb-spine2" : "tb-spine0", nic.rank_subnet).empty()) << nic.rank_subnet;
  }
  auto odd = spec(4, 2, 4, 3);
  odd.set_planes(2);
  EXPECT_THAT(plan_testbed(odd), StatusIs(StatusCode::kInvalidArgument));
  auto one_nic = spec(4, 1, 2, 2);
  one_nic.set_planes(2);
  EXPECT_THAT(plan_testbed(one_nic), StatusIs(StatusCode::kInvalidArgument));
  auto with_pods = three_tier();
  with_pods.set_planes(2);
  EXPECT_THAT(plan_testbed(with_pods), StatusIs(StatusCode::kInvalidArgument));
}

TEST(TestbedPlanTest, RefusesPodsThatDoNotSplitEvenlyOrHaveNoSuperSpine) {
  auto no_super = three_tier();
  no_super.set_super_spines(0);
  EXPECT_THAT(plan_testbed(no_super), StatusIs(StatusCode::kInvalidArgument));
  auto uneven = three_tier();
  uneven.set_pods(3);
  EXPECT_THAT(plan_testbed(uneven), StatusIs(StatusCode::kInvalidArgument));
  auto super_without_pods = spec(4, 1, 2, 2);
  super_without_pods.set_super_spines(1);
  EXPECT_THAT(plan_testbed(super_without_pods), StatusIs(StatusCode::kInvalidArgument));
  auto rails_across_pods = three_tier();
  rails_across_pods.set_nics_per_host(4);  // a rail group of 4 leaves would span both pods
  EXPECT_THAT(plan_testbed(rails_across_pods), StatusIs(StatusCode::kInvalidArgument));
  auto lossless = three_tier();
  lossless.mutable_pfc()->set_lossless(true);
  EXPECT_THAT(plan_testbed(lossless), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::orchestrator::testbed
