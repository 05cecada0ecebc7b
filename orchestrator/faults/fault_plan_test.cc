#include "orchestrator/faults/fault_plan.h"

#include <gtest/gtest.h>

#include "tests/support/leaf_spine_spec.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::faults {
namespace {

using injectors::Direction;

testbed::TestbedPlan small_fabric() {
  v1::VirtualTestbedSpec spec = testing::leaf_spine_spec("ft", 2, 2, 2);
  return *testbed::plan_testbed(spec);
}

v1::Fault fault(v1::Fault::Kind kind, const std::string& link,
                v1::Fault::Direction direction = v1::Fault::DIRECTION_TO_HOST) {
  v1::Fault f;
  f.set_name(link + "-fault");
  f.set_kind(kind);
  f.set_link(link);
  f.set_direction(direction);
  f.set_probability(0.01);
  return f;
}

TEST(FaultPlanTest, HostLinksActOnTheLeafPortFacingTheHost) {
  const auto plan = small_fabric();
  auto site = resolve_site(plan, "h1", v1::Fault::DIRECTION_TO_HOST);
  ASSERT_TRUE(site.ok()) << site.status().to_string();
  EXPECT_TRUE(site->host_link);
  EXPECT_EQ(site->host, 1u);
  // Host 1's NIC sits on leaf 1 (rail-aligned: host h, NIC 0 on leaf h % 2), its first port.
  EXPECT_EQ(site->leaf_netns, "ft-leaf1");
  EXPECT_EQ(site->leaf_ifname, "p0");
  EXPECT_EQ(site->peer_netns, "ft-h1");
  ASSERT_EQ(site->hooks.size(), 1u);
  EXPECT_EQ(site->hooks[0].direction, Direction::kEgress);  // frames towards the host leave the leaf
  auto from = resolve_site(plan, "h1.eth0", v1::Fault::DIRECTION_FROM_HOST);
  ASSERT_TRUE(from.ok());
  ASSERT_EQ(from->hooks.size(), 1u);
  EXPECT_EQ(from->hooks[0].direction, Direction::kIngress);
  auto both = resolve_site(plan, "h0", v1::Fault::DIRECTION_BOTH);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->hooks.size(), 2u);
  EXPECT_EQ(both->leaf_netns, "ft-leaf0");
}

TEST(FaultPlanTest, NicLinksActOnTheirRailLeafsPortFacingThatNic) {
  v1::VirtualTestbedSpec spec;
  spec.set_name("ft");
  spec.set_hosts(4);
  spec.set_nics_per_host(4);
  spec.set_leaves(4);
  spec.set_spines(2);
  const auto plan = *testbed::plan_testbed(spec);
  for (const char* link : {"h1.nic3", "h1.eth3"}) {
    auto site = resolve_site(plan, link, v1::Fault::DIRECTION_BOTH);
    ASSERT_TRUE(site.ok()) << link << ": " << site.status().to_string();
    EXPECT_TRUE(site->host_link);
    EXPECT_EQ(site->host, 1u);
    EXPECT_EQ(site->nic, 3u);
    EXPECT_EQ(site->leaf_netns, "ft-leaf3");  // rail 3
    EXPECT_EQ(site->leaf_ifname, "p1");       // host 1's port on it
    EXPECT_EQ(site->peer_netns, "ft-h1");
    EXPECT_EQ(site->peer_ifname, "eth3");
    ASSERT_EQ(site->hooks.size(), 2u);
    EXPECT_EQ(site->hooks[0].netns, "ft-leaf3");
  }
  // "h1" alone is the host's NIC 0.
  auto bare = resolve_site(plan, "h1", v1::Fault::DIRECTION_TO_HOST);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->peer_ifname, "eth0");
  EXPECT_EQ(bare->leaf_netns, "ft-leaf0");
  // A NIC the host does not have: the error lists the ones it has, and split_faults names the fault.
  auto bad = resolve_site(plan, "h1.nic4", v1::Fault::DIRECTION_BOTH);
  ASSERT_THAT(bad, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(bad.status().message().find("no link 'h1.nic4': host 1's NICs are nic0..nic3"), std::string::npos)
      << bad.status().to_string();
  v1::Fault f = fault(v1::Fault::KIND_LOSS, "h1.nic4");
  f.set_name("rail-loss");
  auto split = split_faults({&f}, plan);
  ASSERT_THAT(split, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(split.status().to_string().find("fault rail-loss"), std::string::npos) << split.status().to_string();
  // Replayer faults on any NIC of a host are that host's.
  v1::Fault slow = fault(v1::Fault::KIND_SLOW_RECEIVER, "h2.nic1");
  EXPECT_EQ(replayer_faults_of_host({&slow}, 2).size(), 1u);
  EXPECT_TRUE(replayer_faults_of_host({&slow}, 1).empty());
  // Its window holds NIC 1's engines alone; one aimed at the host holds them all.
  slow.set_start_ns(5'000'000);
  slow.set_duration_ns(20'000'000);
  const v1::HookWindowSpec on_nic = replayer_hook_window(slow);
  EXPECT_EQ(on_nic.start_ns(), 5'000'000u);
  EXPECT_EQ(on_nic.duration_ns(), 20'000'000u);
  ASSERT_TRUE(on_nic.has_nic());
  EXPECT_EQ(on_nic.nic(), 1u);
  EXPECT_FALSE(replayer_hook_window(fault(v1::Fault::KIND_SLOW_RECEIVER, "h2")).has_nic());
}

TEST(FaultPlanTest, FabricLinksActOnTheLeafsUplink) {
  const auto plan = small_fabric();
  auto site = resolve_site(plan, "leaf0-spine1", v1::Fault::DIRECTION_TO_HOST);
  ASSERT_TRUE(site.ok()) << site.status().to_string();
  EXPECT_FALSE(site->host_link);
  EXPECT_EQ(site->leaf_netns, "ft-leaf0");
  EXPECT_EQ(site->peer_netns, "ft-spine1");
  EXPECT_EQ(site->peer_ifname, "p0");  // the spine's port for leaf 0
  // Leaf 0 has one host port (p0), then one uplink per spine: spine 1 is p2.
  EXPECT_EQ(site->leaf_ifname, "p2");
  ASSERT_EQ(site->hooks.size(), 1u);
  EXPECT_EQ(site->hooks[0].direction, Direction::kIngress);  // down the fabric enters the leaf
  EXPECT_THAT(resolve_site(plan, "leaf0-spine2", v1::Fault::DIRECTION_BOTH),
              StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(resolve_site(plan, "h2", v1::Fault::DIRECTION_BOTH), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(resolve_site(plan, "spine0", v1::Fault::DIRECTION_BOTH),
              StatusIs(StatusCode::kNotFound));
  // A host number too large for its field is an error, not an abort.
  auto huge = resolve_site(plan, "h99999999999", v1::Fault::DIRECTION_BOTH);
  ASSERT_THAT(huge, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(huge.status().message().find("link 'h99999999999': host"), std::string::npos)
      << huge.status().to_string();
}

TEST(FaultPlanTest, ASpineToSuperSpineLinkActsOnTheSpinesUplink) {
  v1::VirtualTestbedSpec spec = testing::leaf_spine_spec("ft", 4, 4, 4);
  spec.set_pods(2);
  spec.set_super_spines(2);
  const auto plan = *testbed::plan_testbed(spec);
  auto site = resolve_site(plan, "spine2-super1", v1::Fault::DIRECTION_FROM_HOST);
  ASSERT_TRUE(site.ok()) << site.status().to_string();
  EXPECT_FALSE(site->host_link);
  EXPECT_EQ(site->leaf_netns, "ft-spine2");
  EXPECT_EQ(site->peer_netns, "ft-super1");
  EXPECT_EQ(site->peer_ifname, "p2");  // the super-spine's port for spine 2
  // Spine 2 (pod 1) has a port per leaf of its pod (p0, p1), then one per super-spine.
  EXPECT_EQ(site->leaf_ifname, "p3");
  ASSERT_EQ(site->hooks.size(), 1u);
  EXPECT_EQ(site->hooks[0].netns, "ft-spine2");
  EXPECT_EQ(site->hooks[0].direction, Direction::kEgress);  // up the fabric leaves the spine
  EXPECT_THAT(resolve_site(plan, "spine2-super2", v1::Fault::DIRECTION_BOTH), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(resolve_site(plan, "leaf0-spine2", v1::Fault::DIRECTION_BOTH), StatusIs(StatusCode::kNotFound));
}

TEST(FaultPlanTest, StormsLeaveFromTheHostNicOrTheLeafsUplinkWithTheirSettings) {
  const auto plan = small_fabric();
  v1::Fault f = fault(v1::Fault::KIND_PFC_STORM, "h1");
  f.set_duration_ns(200'000'000);
  f.add_pfc_priorities(3);
  f.add_pfc_priorities(4);
  auto from_host = storm_plan(f, *resolve_site(plan, "h1", f.direction()));
  ASSERT_TRUE(from_host.ok()) << from_host.status().to_string();
  // The host's NIC pauses the leaf port it is cabled to.
  EXPECT_EQ(from_host->netns, "ft-h1");
  EXPECT_EQ(from_host->ifname, "eth0");
  EXPECT_EQ(from_host->options.priorities, (1u << 3) | (1u << 4));
  EXPECT_EQ(from_host->options.quanta, 0xffff);  // the longest pause unless asked
  EXPECT_EQ(from_host->options.frames_per_second, injectors::PfcStormOptions{}.frames_per_second);
  EXPECT_EQ(from_host->options.duration, std::chrono::milliseconds(200));

  f.set_link("leaf0-spine1");
  f.set_pfc_quanta(100);
  f.set_pfc_frames_per_second(50);
  auto from_leaf = storm_plan(f, *resolve_site(plan, "leaf0-spine1", f.direction()));
  ASSERT_TRUE(from_leaf.ok()) << from_leaf.status().to_string();
  // The leaf's uplink pauses the spine's port towards the leaf.
  EXPECT_EQ(from_leaf->netns, "ft-leaf0");
  EXPECT_EQ(from_leaf->ifname, "p2");
  EXPECT_EQ(from_leaf->options.quanta, 100);
  EXPECT_EQ(from_leaf->options.frames_per_second, 50);

  const auto site = *resolve_site(plan, "h0", f.direction());
  v1::Fault endless = f;
  endless.set_duration_ns(0);
  EXPECT_THAT(storm_plan(endless, site), StatusIs(StatusCode::kInvalidArgument));
  v1::Fault wide = f;
  wide.set_pfc_quanta(70000);
  EXPECT_THAT(storm_plan(wide, site), StatusIs(StatusCode::kInvalidArgument));
  v1::Fault no_such = f;
  no_such.add_pfc_priorities(8);
  EXPECT_THAT(storm_plan(no_such, site), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(storm_plan(fault(v1::Fault::KIND_LOSS, "h0"), site), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(kind_name(v1::Fault::KIND_PFC_STORM), "pfc-storm");
}

TEST(FaultPlanTest, PacketRulesCarryDecisionWindowAndSeed) {
  v1::Fault loss = fault(v1::Fault::KIND_LOSS, "h1");
  loss.set_seed(7);
  loss.set_start_ns(2'000'000'000);
  loss.set_duration_ns(500'000'000);
  loss.set_roce_only(true);
  auto rule = packet_rule(loss, 3, std::chrono::nanoseconds(0));
  ASSERT_TRUE(rule.ok()) << rule.status().to_string();
  EXPECT_EQ(rule->decider, injectors::Decider::kBernoulli);
  EXPECT_EQ(rule->action, injectors::Action::kDrop);
  EXPECT_DOUBLE_EQ(rule->probability, 0.01);
  EXPECT_EQ(rule->seed, 10u);
  EXPECT_EQ(rule->match.dport.lo, 4791);
  EXPECT_EQ(rule->window.start.count(), 2'000'000'000);
  EXPECT_EQ(rule->window.end.count(), 2'500'000'000);
  // Armed 300 ms after the run started: the window moves that much earlier.
  auto late = packet_rule(loss, 0, std::chrono::milliseconds(-300));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->window.start.count(), 1'700'000'000);
  EXPECT_EQ(late->window.end.count(), 2'200'000'000);
  // Armed after the window was over: an error, not a silent no-op.
  EXPECT_THAT(packet_rule(loss, 0, std::chrono::seconds(-3)),
              StatusIs(StatusCode::kFailedPrecondition));
  // Open windows stay open.
  auto open = packet_rule(fault(v1::Fault::KIND_LOSS, "h1"), 0, std::chrono::milliseconds(-5));
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->window.start.count(), 0);
  EXPECT_EQ(open->window.end.count(), 0);
}

TEST(FaultPlanTest, RunsSeedRepeatsOrChangesEveryFaultsDraws) {
  v1::Fault loss = fault(v1::Fault::KIND_LOSS, "h1");
  loss.set_seed(7);
  const auto seed_of = [&](uint32_t repetition, uint64_t runs_seed) {
    auto rule = packet_rule(loss, repetition, {}, runs_seed);
    EXPECT_TRUE(rule.ok());
    return rule.ok() ? rule->seed : 0;
  };
  // The same scenario seed draws the same packets, run after run.
  EXPECT_EQ(seed_of(0, 42), seed_of(0, 42));
  EXPECT_EQ(seed_of(2, 42), seed_of(2, 42));
  // Another scenario seed draws others, in every repetition; repetitions differ among themselves.
  EXPECT_NE(seed_of(0, 42), seed_of(0, 43));
  EXPECT_NE(seed_of(1, 42), seed_of(1, 43));
  EXPECT_NE(seed_of(0, 42), seed_of(1, 42));
  // Neighbouring scenario seeds do not collide with neighbouring repetitions.
  EXPECT_NE(seed_of(1, 42), seed_of(0, 43));
  // No scenario seed: the fault's own seed plus the repetition.
  EXPECT_EQ(seed_of(3, 0), 10u);
}

TEST(FaultPlanTest, BurstLossIsGilbertWithTheAskedRateAndBurst) {
  v1::Fault burst = fault(v1::Fault::KIND_BURST_LOSS, "leaf0-spine1");
  burst.set_probability(0.02);
  burst.set_mean_burst(4);
  auto rule = packet_rule(burst, 0, {});
  ASSERT_TRUE(rule.ok()) << rule.status().to_string();
  EXPECT_EQ(rule->decider, injectors::Decider::kGilbert);
  const auto& g = rule->gilbert;
  EXPECT_DOUBLE_EQ(1 / g.r, 4.0);                  // mean burst
  EXPECT_NEAR(g.p / (g.p + g.r), 0.02, 1e-12);     // time in the (all-lost) bad state
  EXPECT_EQ(g.h, 0);
  EXPECT_EQ(g.k, 1);
  burst.set_mean_burst(0.5);
  EXPECT_THAT(packet_rule(burst, 0, {}), StatusIs(StatusCode::kInvalidArgument));
}

TEST(FaultPlanTest, OtherPacketKindsMapToTheirActions) {
  auto corrupt = packet_rule(fault(v1::Fault::KIND_CORRUPT, "h0"), 0, {});
  ASSERT_TRUE(corrupt.ok());
  EXPECT_EQ(corrupt->action, injectors::Action::kCorrupt);
  EXPECT_TRUE(corrupt->corrupt_silent);  // only the ICRC tells, as on a RoCE NIC
  auto ecn = packet_rule(fault(v1::Fault::KIND_ECN_MARK, "h0"), 0, {});
  ASSERT_TRUE(ecn.ok());
  EXPECT_EQ(ecn->action, injectors::Action::kEcnCe);
  v1::Fault hole = fault(v1::Fault::KIND_BLACKHOLE, "h0");
  hole.set_duration_ns(100);
  auto blackhole = packet_rule(hole, 0, {});
  ASSERT_TRUE(blackhole.ok());
  EXPECT_EQ(blackhole->decider, injectors::Decider::kAlways);
  EXPECT_EQ(blackhole->action, injectors::Action::kDrop);
  EXPECT_THAT(packet_rule(fault(v1::Fault::KIND_LINK_FLAP, "h0"), 0, {}),
              StatusIs(StatusCode::kInvalidArgument));
}

TEST(FaultPlanTest, SplitsByHostAndFabricAndBuildsReplayerFlags) {
  const auto plan = small_fabric();
  v1::Fault a = fault(v1::Fault::KIND_LOSS, "h1");
  v1::Fault b = fault(v1::Fault::KIND_LOSS, "leaf1-spine0");
  v1::Fault c = fault(v1::Fault::KIND_SLOW_RECEIVER, "h1");
  c.set_start_ns(100'000'000);
  c.set_duration_ns(250'000'000);
  v1::Fault d = fault(v1::Fault::KIND_SEND_DELAY, "h0.eth0");
  d.set_delay_ns(50'000);
  auto split = split_faults({&a, &b, &c, &d}, plan);
  ASSERT_TRUE(split.ok()) << split.status().to_string();
  ASSERT_EQ(split->fabric.size(), 1u);
  EXPECT_EQ(split->fabric[0], &b);
  EXPECT_EQ(split->by_host[1], (std::vector<const v1::Fault*>{&a, &c}));
  EXPECT_EQ(split->by_host[0], (std::vector<const v1::Fault*>{&d}));
  EXPECT_EQ(replayer_hook_flags({&a, &b, &c, &d}, 1),
            (std::vector<std::string>{"--drain-pause=100000000ns:250000000ns"}));
  EXPECT_EQ(replayer_hook_flags({&a, &b, &c, &d}, 0),
            (std::vector<std::string>{"--send-delay=0ns:0ns:50000ns"}));
  v1::Fault bad = fault(v1::Fault::KIND_LOSS, "h9");
  EXPECT_THAT(split_faults({&bad}, plan), StatusIs(StatusCode::kNotFound));
}

}  // namespace
}  // namespace collide::orchestrator::faults
