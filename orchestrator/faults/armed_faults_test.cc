// arm_faults() on a real virtual testbed: flaps and rate limits happen in their windows and are
// undone completely (link up with its routes and neighbours, qdiscs gone), and the ground truth
// says when they really held.
#include "orchestrator/faults/armed_faults.h"

#include <thread>

#include <gtest/gtest.h>

#include "common/process.h"
#include "orchestrator/testbed/virtual_testbed.h"
#include "tests/support/leaf_spine_spec.h"
#include "tests/support/privileged.h"

namespace collide::orchestrator::faults {
namespace {

using namespace std::chrono_literals;

std::string run(const std::vector<std::string>& argv) {
  auto r = process::run_command(argv);
  return r.ok() ? r->output : r.status().to_string();
}

class ArmedFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_netns());
    COLLIDE_REQUIRE(testing::missing_bpf());
    COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
    v1::VirtualTestbedSpec spec = testing::leaf_spine_spec("fat", 2, 2, 2);
    (void)testbed::remove_testbed("fat");  // a crashed earlier run's leftovers
    auto plan = testbed::plan_testbed(spec);
    ASSERT_TRUE(plan.ok());
    auto bed = testbed::VirtualTestbed::create(*plan);
    ASSERT_TRUE(bed.ok()) << bed.status().to_string();
    bed_ = std::move(bed).value();
  }
  std::unique_ptr<testbed::VirtualTestbed> bed_;
};

v1::Fault make(const std::string& name, v1::Fault::Kind kind, const std::string& link,
               uint64_t start_ms, uint64_t duration_ms) {
  v1::Fault f;
  f.set_name(name);
  f.set_kind(kind);
  f.set_link(link);
  f.set_start_ns(start_ms * 1'000'000);
  f.set_duration_ns(duration_ms * 1'000'000);
  return f;
}

TEST_F(ArmedFaultsTest, FlapAndRateLimitHoldInTheirWindowsAndAreUndone) {
  const v1::Fault flap = make("flap", v1::Fault::KIND_LINK_FLAP, "h1", 100, 300);
  v1::Fault shape = make("shape", v1::Fault::KIND_RATE_LIMIT, "leaf0-spine1", 0, 600);
  shape.set_rate_gbps(0.1);
  shape.set_direction(v1::Fault::DIRECTION_BOTH);  // down: the spine's egress; up: the leaf's
  v1::Fault loss = make("loss", v1::Fault::KIND_LOSS, "h0", 0, 0);
  loss.set_probability(0.5);
  const v1::Fault slow = make("slow", v1::Fault::KIND_SLOW_RECEIVER, "h1", 50, 100);
  const auto& plan = bed_->plan();
  // Host 1's NIC is on leaf 1, port p0; leaf 0's uplink to spine 1 is p2, spine 1's port p0.
  const std::string routes_before = run({"ip", "-n", "fat-leaf1", "route", "show"});
  const std::string neigh_before = run({"ip", "-n", "fat-leaf1", "neigh", "show", "dev", "p0"});
  ASSERT_NE(neigh_before.find("PERMANENT"), std::string::npos) << neigh_before;

  auto armed = arm_faults({&flap, &shape, &loss, &slow}, plan, {});
  ASSERT_TRUE(armed.ok()) << armed.status().to_string();
  const auto start = (*armed)->run_start();
  std::this_thread::sleep_until(start + 250ms);
  EXPECT_NE(run({"ip", "-n", "fat-leaf1", "link", "show", "p0"}).find("state DOWN"),
            std::string::npos);
  EXPECT_NE(run({"tc", "-n", "fat-spine1", "qdisc", "show", "dev", "p0"}).find("tbf"),
            std::string::npos);
  EXPECT_NE(run({"tc", "-n", "fat-leaf0", "qdisc", "show", "dev", "p2"}).find("tbf"),
            std::string::npos);
  std::this_thread::sleep_until(start + 800ms);
  // Up again, whole: routes and the permanent neighbour entry for the DPDK-owned host NIC.
  EXPECT_EQ(run({"ip", "-n", "fat-leaf1", "link", "show", "p0"}).find("state DOWN"),
            std::string::npos);
  EXPECT_EQ(run({"ip", "-n", "fat-leaf1", "route", "show"}), routes_before);
  EXPECT_EQ(run({"ip", "-n", "fat-leaf1", "neigh", "show", "dev", "p0"}), neigh_before);
  EXPECT_EQ(run({"tc", "-n", "fat-spine1", "qdisc", "show", "dev", "p0"}).find("c011:"),
            std::string::npos);
  EXPECT_TRUE((*armed)->error().ok()) << (*armed)->error().to_string();

  (*armed)->disarm();
  const auto truth = (*armed)->ground_truth();
  ASSERT_EQ(truth.size(), 4u);
  const uint64_t t0 = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
  auto ms = [&](uint64_t t) { return (static_cast<double>(t) - static_cast<double>(t0)) / 1e6; };
  EXPECT_EQ(truth[0].kind, "link-flap");
  EXPECT_NEAR(ms(truth[0].start_ns), 100, 60);
  EXPECT_NEAR(ms(truth[0].end_ns) - ms(truth[0].start_ns), 300, 60);
  EXPECT_EQ(truth[1].kind, "rate-limit");
  EXPECT_NEAR(ms(truth[1].end_ns), 600, 100);
  EXPECT_EQ(truth[2].kind, "loss");
  EXPECT_NEAR(ms(truth[2].start_ns), 0, 20);
  EXPECT_GT(truth[2].end_ns, truth[2].start_ns);  // open: ends when disarmed
  EXPECT_EQ(truth[3].kind, "slow-receiver");
  EXPECT_NEAR(ms(truth[3].start_ns), 50, 1);
  EXPECT_NEAR(ms(truth[3].end_ns), 150, 1);
}

uint64_t rx_packets(const std::string& netns, const std::string& dev) {
  const std::string text = run({"ip", "netns", "exec", netns, "cat", "/sys/class/net/" + dev + "/statistics/rx_packets"});
  return std::stoull(text);
}

TEST_F(ArmedFaultsTest, StormsSendTheirFramesInTheirWindowFromTheHostNicAndTheLeafsUplink) {
  // 500 frames a second for 200 ms: 100 frames each, arriving at the port they pause.
  v1::Fault host = make("host-storm", v1::Fault::KIND_PFC_STORM, "h1", 50, 200);
  host.set_pfc_frames_per_second(500);
  host.add_pfc_priorities(3);
  v1::Fault fabric = host;
  fabric.set_name("fabric-storm");
  fabric.set_link("leaf0-spine1");
  // Host 1's NIC is cabled to leaf 1's p0; leaf 0's uplink p2 to spine 1's p0.
  const uint64_t leaf_before = rx_packets("fat-leaf1", "p0");
  const uint64_t spine_before = rx_packets("fat-spine1", "p0");
  auto armed = arm_faults({&host, &fabric}, bed_->plan(), {});
  ASSERT_TRUE(armed.ok()) << armed.status().to_string();
  const auto start = (*armed)->run_start();
  std::this_thread::sleep_until(start + 400ms);
  (*armed)->disarm();
  EXPECT_TRUE((*armed)->error().ok()) << (*armed)->error().to_string();
  const auto truth = (*armed)->ground_truth();
  ASSERT_EQ(truth.size(), 2u);
  const uint64_t t0 = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
  for (const auto& w : truth) {
    EXPECT_EQ(w.kind, "pfc-storm");
    EXPECT_NEAR((static_cast<double>(w.start_ns) - static_cast<double>(t0)) / 1e6, 50, 20) << w.name;
    EXPECT_NEAR(static_cast<double>(w.end_ns - w.start_ns) / 1e6, 200, 30) << w.name;
    EXPECT_NEAR(static_cast<double>(w.packets_matched), 100, 5) << w.name;  // due by the schedule
    EXPECT_GE(static_cast<double>(w.packets_acted), 0.8 * static_cast<double>(w.packets_matched)) << w.name;
  }
  // IPv6 neighbour discovery may add a frame or two on an idle testbed.
  EXPECT_NEAR(static_cast<double>(rx_packets("fat-leaf1", "p0") - leaf_before),
              static_cast<double>(truth[0].packets_acted), 3);
  EXPECT_NEAR(static_cast<double>(rx_packets("fat-spine1", "p0") - spine_before),
              static_cast<double>(truth[1].packets_acted), 3);
}

TEST_F(ArmedFaultsTest, DisarmingMidFlapBringsTheLinkBack) {
  const v1::Fault flap = make("flap", v1::Fault::KIND_LINK_FLAP, "leaf1-spine0", 0, 10'000);
  auto armed = arm_faults({&flap}, bed_->plan(), {});
  ASSERT_TRUE(armed.ok()) << armed.status().to_string();
  std::this_thread::sleep_for(300ms);
  EXPECT_NE(run({"ip", "-n", "fat-leaf1", "link", "show", "p1"}).find("state DOWN"),
            std::string::npos);
  armed->reset();
  EXPECT_EQ(run({"ip", "-n", "fat-leaf1", "link", "show", "p1"}).find("state DOWN"),
            std::string::npos);
  // The leaf's multipath route to the other leaf's hosts is whole again.
  const std::string route = run({"ip", "-n", "fat-leaf1", "route", "show", "198.19.0.0/16"});
  EXPECT_NE(route.find("nexthop"), std::string::npos) << route;
  EXPECT_EQ(route.find("dead"), std::string::npos) << route;
}

}  // namespace
}  // namespace collide::orchestrator::faults
