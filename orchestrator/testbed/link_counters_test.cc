#include "orchestrator/testbed/link_counters.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::testbed {
namespace {

// The shape `ip -s -j link show` prints (iproute2 6.x), trimmed to what is read.
std::string interface_json(const std::string& name, uint64_t tx_bytes, uint64_t tx_packets,
                           uint64_t rx_bytes, uint64_t rx_packets, uint64_t tx_dropped = 0,
                           uint64_t rx_dropped = 0) {
  return fmt::format(
      R"({{"ifindex":2,"ifname":"{}","flags":["BROADCAST","UP"],"mtu":1500,"stats64":{{"rx":{{"bytes":{},"packets":{},"errors":0,"dropped":{}}},"tx":{{"bytes":{},"packets":{},"errors":0,"dropped":{}}}}}}})",
      name, rx_bytes, rx_packets, rx_dropped, tx_bytes, tx_packets, tx_dropped);
}

TEST(LinkCountersTest, ParsesEveryInterfacesStats) {
  auto parsed = parse_link_stats("[" + interface_json("lo", 0, 0, 0, 0) + "," +
                                 interface_json("eth2", 4096, 4, 1000, 10, 3, 2) + "]");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  ASSERT_EQ(parsed->size(), 2u);
  const report::LinkEndCounters& eth2 = parsed->at("eth2");
  EXPECT_EQ(eth2.tx_bytes, 4096u);
  EXPECT_EQ(eth2.tx_packets, 4u);
  EXPECT_EQ(eth2.rx_bytes, 1000u);
  EXPECT_EQ(eth2.rx_packets, 10u);
  EXPECT_EQ(eth2.tx_dropped, 3u);
  EXPECT_EQ(eth2.rx_dropped, 2u);
}

TEST(LinkCountersTest, RefusesWhatIsNotCounters) {
  EXPECT_THAT(parse_link_stats("not json"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_link_stats(R"({"ifname":"eth0"})"), StatusIs(StatusCode::kInvalidArgument));
  auto no_stats = parse_link_stats(R"([{"ifname":"eth0"}])");
  ASSERT_THAT(no_stats, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(no_stats.status().message().find("eth0 without stats64"), std::string::npos);
  auto negative = parse_link_stats(
      R"([{"ifname":"eth0","stats64":{"rx":{"bytes":-1,"packets":0,"dropped":0},"tx":{"bytes":0,"packets":0,"dropped":0}}}])");
  ASSERT_THAT(negative, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(negative.status().message().find("stats64.rx.bytes"), std::string::npos);
}

TEST(LinkCountersTest, EveryLinkNamedWithItsRailAndBothEndsDeltas) {
  v1::VirtualTestbedSpec spec;
  spec.set_name("tb");
  spec.set_hosts(2);
  spec.set_nics_per_host(2);
  spec.set_leaves(2);
  spec.set_spines(1);
  auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok());
  CounterSnapshot before, after;
  // Host 1's NIC 1 sent 3000 bytes in 3 frames to leaf 1 (its port p1), which received them.
  before["tb-h1"]["eth1"] = {100, 1, 50, 1};
  after["tb-h1"]["eth1"] = {3100, 4, 50, 1};
  after["tb-leaf1"]["p1"] = {0, 0, 3000, 3};
  // Leaf 0 sent 500 bytes up to the spine.
  after["tb-leaf0"]["p2"] = {500, 5, 0, 0};
  after["tb-spine0"]["p0"] = {0, 0, 500, 5};
  // A counter that went backwards (an interface recreated) counts nothing rather than wrapping.
  before["tb-h0"]["eth0"] = {10, 1, 10, 1};

  const std::vector<report::FabricLink> links = link_traffic(*plan, before, after);
  ASSERT_EQ(links.size(), 4u + 2);
  std::map<std::string, report::FabricLink> by_name;
  for (const report::FabricLink& l : links) by_name[l.name] = l;
  for (const char* name : {"h0.nic0-leaf0", "h0.nic1-leaf1", "h1.nic0-leaf0", "h1.nic1-leaf1",
                           "leaf0-spine0", "leaf1-spine0"}) {
    EXPECT_EQ(by_name.count(name), 1u) << name;
  }
  const report::FabricLink& h1 = by_name["h1.nic1-leaf1"];
  EXPECT_TRUE(h1.host_link);
  EXPECT_EQ(h1.lower, "h1.nic1");
  EXPECT_EQ(h1.upper, "leaf1");
  EXPECT_EQ(h1.leaf, 1u);
  EXPECT_EQ(h1.rail, 1u);
  EXPECT_EQ(h1.lower_end.tx_bytes, 3000u);
  EXPECT_EQ(h1.lower_end.tx_packets, 3u);
  EXPECT_EQ(h1.lower_end.rx_bytes, 0u);
  EXPECT_EQ(h1.upper_end.rx_bytes, 3000u);
  const report::FabricLink& up = by_name["leaf0-spine0"];
  EXPECT_FALSE(up.host_link);
  EXPECT_EQ(up.leaf, 0u);
  EXPECT_EQ(up.spine, 0u);
  EXPECT_EQ(up.lower_end.tx_bytes, 500u);
  EXPECT_EQ(up.upper_end.rx_packets, 5u);
  EXPECT_EQ(by_name["h0.nic0-leaf0"].lower_end.tx_bytes, 0u);
}

}  // namespace
}  // namespace collide::orchestrator::testbed
