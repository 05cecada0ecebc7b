#include "orchestrator/testbed/topology_text.h"

#include <gtest/gtest.h>

#include "tests/support/leaf_spine_spec.h"

namespace collide::orchestrator::testbed {
namespace {

TEST(TopologyTextTest, EachSwitchWithWhatIsCabledAboveAndBelowIt) {
  // Rails: 2 hosts x 2 NICs, 2 leaves (one per rail), 2 spines; leaf uplinks at their own rate.
  v1::VirtualTestbedSpec spec;
  spec.set_name("topo");
  spec.set_hosts(2);
  spec.set_nics_per_host(2);
  spec.set_leaves(2);
  spec.set_spines(2);
  spec.set_host_link_gbps(10);
  spec.set_fabric_link_gbps(0);
  spec.mutable_leaf_up()->set_gbps(25);
  auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::string text = topology_text(*plan);
  EXPECT_NE(text.find("testbed topo: 2 spines, 2 leaves, 4 host NICs\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  spine1    down: leaf0 leaf1\n"), std::string::npos) << text;
  // Rail r of every host under leaf r.
  EXPECT_NE(text.find("  leaf0     up: spine0 spine1  down: h0.nic0 h1.nic0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  leaf1     up: spine0 spine1  down: h0.nic1 h1.nic1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("leaf_up 25 Gb/s;"), std::string::npos) << text;
  EXPECT_NE(text.find("spine_down unshaped\n"), std::string::npos) << text;
  EXPECT_NE(text.find("host 10 Gb/s;"), std::string::npos) << text;
  EXPECT_NE(text.find("  routing: static (collide's own routes)\n"), std::string::npos) << text;

  // The same fabric routed by BGP says so, with BFD's and BGP's timers.
  spec.set_routing(v1::VirtualTestbedSpec::ROUTING_BGP);
  spec.mutable_bgp()->set_bfd_interval_ns(50'000'000);
  auto bgp = plan_testbed(spec);
  ASSERT_TRUE(bgp.ok()) << bgp.status().message();
  const std::string routed = topology_text(*bgp);
  EXPECT_NE(routed.find("  routing: BGP (FRR), leaf l AS 65100+l, spines AS 65000; BFD 50 ms x 3; keepalive 3 s, "
                        "hold 9 s\n"),
            std::string::npos)
      << routed;
}

TEST(TopologyTextTest, OneLeafWithoutSpinesHasNoUplinks) {
  v1::VirtualTestbedSpec spec = testing::leaf_spine_spec("one", 2, 1, 0);
  auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::string text = topology_text(*plan);
  EXPECT_NE(text.find("testbed one: 0 spines, 1 leaves, 2 host NICs\n  leaf0     down: h0.nic0 h1.nic0\n"),
            std::string::npos)
      << text;
}

TEST(TopologyTextTest, SuperSpinesOnTopAndEachLeafWithItsPod) {
  v1::VirtualTestbedSpec spec = testing::leaf_spine_spec("t3", 4, 4, 2);
  spec.set_pods(2);
  spec.set_super_spines(1);
  spec.set_super_link_gbps(100);
  auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::string text = topology_text(*plan);
  EXPECT_NE(text.find("testbed t3: 1 super-spines, 2 spines, 4 leaves, 4 host NICs\n"
                      "  super0    down: spine0 spine1\n"
                      "  spine0    up: super0  down: leaf0 leaf1\n"
                      "  spine1    up: super0  down: leaf2 leaf3\n"
                      "  leaf0     up: spine0  down: h0.nic0  (pod 0)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  leaf3     up: spine1  down: h3.nic0  (pod 1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("spine_up 100 Gb/s; super_down 100 Gb/s"), std::string::npos) << text;
}

}  // namespace
}  // namespace collide::orchestrator::testbed
