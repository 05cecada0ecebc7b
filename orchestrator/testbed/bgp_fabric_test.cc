#include "orchestrator/testbed/bgp_fabric.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/support/leaf_spine_spec.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::testbed {
namespace {

v1::VirtualTestbedSpec bgp_spec(uint32_t hosts, uint32_t leaves, uint32_t spines) {
  v1::VirtualTestbedSpec s = testing::leaf_spine_spec("tb", hosts, leaves, spines);
  s.set_routing(v1::VirtualTestbedSpec::ROUTING_BGP);
  return s;
}

TEST(BgpFabricTest, TimersDefaultToFrrsOwnAndTakeWholeUnits) {
  v1::VirtualTestbedSpec s = bgp_spec(4, 2, 2);
  auto t = resolve_bgp(s);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->bfd_interval_ms, 300u);
  EXPECT_EQ(t->bfd_multiplier, 3u);
  EXPECT_EQ(t->keepalive_s, 3u);
  EXPECT_EQ(t->hold_s, 9u);
  EXPECT_EQ(t->bfd_detection_ns(), 900'000'000u);

  s.mutable_bgp()->set_bfd_interval_ns(50'000'000);
  s.mutable_bgp()->set_bfd_multiplier(4);
  s.mutable_bgp()->set_keepalive_ns(1'000'000'000);
  s.mutable_bgp()->set_hold_ns(3'000'000'000);
  t = resolve_bgp(s);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->bfd_detection_ns(), 200'000'000u);
  EXPECT_EQ(t->keepalive_s, 1u);
  EXPECT_EQ(t->hold_s, 3u);
}

TEST(BgpFabricTest, TimersBgpCannotKeepAreRefusedByField) {
  const auto refused = [](auto change, const std::string& field) {
    v1::VirtualTestbedSpec s = bgp_spec(4, 2, 2);
    change(*s.mutable_bgp());
    auto t = resolve_bgp(s);
    ASSERT_FALSE(t.ok()) << field;
    EXPECT_EQ(t.status().message().rfind(field + ":", 0), 0u) << t.status().message();
  };
  refused([](v1::BgpSettings& b) { b.set_bfd_interval_ns(1'500'000); }, "bgp.bfd_interval_ns");  // not whole ms
  refused([](v1::BgpSettings& b) { b.set_bfd_interval_ns(5'000'000); }, "bgp.bfd_interval_ns");  // under 10 ms
  refused([](v1::BgpSettings& b) { b.set_bfd_multiplier(1); }, "bgp.bfd_multiplier");
  refused([](v1::BgpSettings& b) { b.set_keepalive_ns(1'500'000'000); }, "bgp.keepalive_ns");
  refused([](v1::BgpSettings& b) { b.set_hold_ns(2'000'000'000); }, "bgp.hold_ns");
  refused(
      [](v1::BgpSettings& b) {
        b.set_keepalive_ns(5'000'000'000);
        b.set_hold_ns(9'000'000'000);
      },
      "bgp.hold_ns");
}

TEST(BgpFabricTest, FabricsBgpDoesNotCoverHereAreRefused) {
  v1::VirtualTestbedSpec no_spines = bgp_spec(2, 1, 0);
  EXPECT_THAT(resolve_bgp(no_spines).status(), StatusIs(StatusCode::kInvalidArgument));
  v1::VirtualTestbedSpec pods = bgp_spec(4, 4, 4);
  pods.set_pods(2);
  pods.set_super_spines(2);
  EXPECT_THAT(resolve_bgp(pods).status(), StatusIs(StatusCode::kInvalidArgument));
  v1::VirtualTestbedSpec own_routes = bgp_spec(4, 2, 2);
  own_routes.add_routes()->set_on("leaf0");
  EXPECT_THAT(resolve_bgp(own_routes).status(), StatusIs(StatusCode::kInvalidArgument));
  v1::VirtualTestbedSpec timers_without_bgp = bgp_spec(4, 2, 2);
  timers_without_bgp.set_routing(v1::VirtualTestbedSpec::ROUTING_STATIC);
  timers_without_bgp.mutable_bgp()->set_bfd_multiplier(3);
  EXPECT_THAT(resolve_bgp(timers_without_bgp).status(), StatusIs(StatusCode::kInvalidArgument));
}

TEST(BgpFabricTest, EveryLeafPeersWithEverySpineEachLeafAnAsTheSpinesOne) {
  auto plan = plan_testbed(bgp_spec(4, 2, 2));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const std::vector<BgpSpeaker> speakers = bgp_speakers(*plan);
  ASSERT_EQ(speakers.size(), 4u);
  std::map<std::string, const BgpSpeaker*> by_name;
  std::set<std::string> router_ids;
  for (const BgpSpeaker& s : speakers) {
    by_name[s.name] = &s;
    EXPECT_TRUE(router_ids.insert(s.router_id).second) << s.router_id;
    EXPECT_EQ(s.neighbors.size(), 2u) << s.name;
  }
  EXPECT_EQ(speakers[0].name, "leaf0");  // leaves first
  EXPECT_EQ(by_name.at("leaf0")->asn, kLeafAsnBase);
  EXPECT_EQ(by_name.at("leaf1")->asn, kLeafAsnBase + 1);
  EXPECT_EQ(by_name.at("spine0")->asn, kSpineAsn);
  EXPECT_EQ(by_name.at("spine1")->asn, kSpineAsn);
  for (const BgpNeighbor& n : by_name.at("leaf0")->neighbors) EXPECT_EQ(n.asn, kSpineAsn);
  std::set<uint32_t> spine_peers;
  for (const BgpNeighbor& n : by_name.at("spine0")->neighbors) spine_peers.insert(n.asn);
  EXPECT_EQ(spine_peers, (std::set<uint32_t>{kLeafAsnBase, kLeafAsnBase + 1}));
  // Host h hangs under leaf h % 2: leaf0 announces hosts 0 and 2, the spines nothing.
  EXPECT_EQ(by_name.at("leaf0")->networks, (std::vector<std::string>{"198.19.0.0/27", "198.19.2.0/27"}));
  EXPECT_TRUE(by_name.at("spine0")->networks.empty());
  // A neighbour is the far end of a link of the speaker's own.
  for (const BgpNeighbor& n : by_name.at("leaf1")->neighbors) {
    bool cabled = false;
    for (const PlannedLink& l : plan->links) {
      cabled |= l.a.netns == "tb-leaf1" && bare_address(l.b.address) == n.address;
    }
    EXPECT_TRUE(cabled) << n.address;
  }
}

TEST(BgpFabricTest, ConfigsCarryTheTimersSessionsAndAnnouncements) {
  auto plan = plan_testbed(bgp_spec(4, 2, 2));
  ASSERT_TRUE(plan.ok());
  BgpTimers t;
  t.bfd_interval_ms = 50;
  t.bfd_multiplier = 3;
  const BgpSpeaker leaf = bgp_speakers(*plan)[0];
  const std::string bgpd = bgpd_conf(leaf, t);
  EXPECT_NE(bgpd.find("router bgp 65100\n"), std::string::npos) << bgpd;
  EXPECT_NE(bgpd.find(" timers bgp 3 9\n"), std::string::npos) << bgpd;
  EXPECT_NE(bgpd.find("  network 198.19.0.0/27\n"), std::string::npos) << bgpd;
  EXPECT_NE(bgpd.find("  maximum-paths 64\n"), std::string::npos) << bgpd;
  for (const BgpNeighbor& n : leaf.neighbors) {
    EXPECT_NE(bgpd.find(" neighbor " + n.address + " remote-as 65000\n"), std::string::npos) << bgpd;
    EXPECT_NE(bgpd.find(" neighbor " + n.address + " bfd profile fabric\n"), std::string::npos) << bgpd;
  }
  const std::string bfdd = bfdd_conf(leaf, t);
  EXPECT_NE(bfdd.find("  receive-interval 50\n  transmit-interval 50\n  detect-multiplier 3\n"), std::string::npos)
      << bfdd;
  EXPECT_NE(zebra_conf(leaf).find("hostname leaf0\n"), std::string::npos);
  EXPECT_NE(zebra_conf(leaf).find("no zebra nexthop kernel enable\n"), std::string::npos);
}

TEST(BgpFabricTest, ConvergedLeavesReachEveryOtherLeafsHostsOverEverySpine) {
  auto plan = plan_testbed(bgp_spec(4, 2, 2));
  ASSERT_TRUE(plan.ok());
  const std::vector<ConvergedRoute> routes = bgp_converged_routes(*plan);
  ASSERT_EQ(routes.size(), 4u);  // each leaf: the other leaf's 2 hosts
  for (const ConvergedRoute& r : routes) {
    EXPECT_EQ(r.next_hops, 2u);
    const bool leaf0 = r.netns == "tb-leaf0";
    EXPECT_TRUE(r.prefix == (leaf0 ? "198.19.1.0/27" : "198.19.0.0/27") ||
                r.prefix == (leaf0 ? "198.19.3.0/27" : "198.19.2.0/27"))
        << r.netns << " " << r.prefix;
  }
  // Two planes: a leaf reaches only its own plane's leaves, over that plane's spine.
  v1::VirtualTestbedSpec planes = bgp_spec(4, 4, 2);
  planes.set_nics_per_host(2);
  planes.set_planes(2);
  auto two = plan_testbed(planes);
  ASSERT_TRUE(two.ok()) << two.status().to_string();
  for (const ConvergedRoute& r : bgp_converged_routes(*two)) EXPECT_EQ(r.next_hops, 1u) << r.netns << " " << r.prefix;
  for (const BgpSpeaker& s : bgp_speakers(*two)) {
    if (s.name.rfind("spine", 0) == 0) {
      EXPECT_EQ(s.asn, kSpineAsn + (s.name == "spine1" ? 1 : 0)) << s.name;
    }
  }
}

TEST(BgpFabricTest, RoutesParseFromIproute2sJson) {
  const std::string json = R"([{"dst":"198.19.1.0/27","nhid":21,"protocol":"bgp","metric":20,"flags":[],
    "nexthops":[{"gateway":"198.18.0.1","dev":"p2","weight":1,"flags":[]},
                {"gateway":"198.18.0.3","dev":"p3","weight":1,"flags":[]}]},
    {"dst":"198.19.3.0/27","nhid":16,"gateway":"198.18.0.1","dev":"p2","protocol":"bgp","metric":20,"flags":[]}])";
  auto routes = parse_bgp_routes(json);
  ASSERT_TRUE(routes.ok()) << routes.status().to_string();
  ASSERT_EQ(routes->size(), 2u);
  EXPECT_EQ((*routes)[0], (std::pair<std::string, size_t>{"198.19.1.0/27", 2}));
  EXPECT_EQ((*routes)[1], (std::pair<std::string, size_t>{"198.19.3.0/27", 1}));
  EXPECT_TRUE(parse_bgp_routes("[]")->empty());
  EXPECT_FALSE(parse_bgp_routes("not json").ok());
  EXPECT_FALSE(parse_bgp_routes(R"([{"gateway":"198.18.0.1"}])").ok());
}

}  // namespace
}  // namespace collide::orchestrator::testbed
