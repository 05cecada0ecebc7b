#include "orchestrator/faults/bgp_phases.h"

#include <gtest/gtest.h>

#include "tests/support/leaf_spine_spec.h"

namespace collide::orchestrator::faults {
namespace {

// 4 hosts under 2 leaves, 2 spines, routing: bgp.
testbed::TestbedPlan bgp_plan() {
  v1::VirtualTestbedSpec s = testing::leaf_spine_spec("tb", 4, 2, 2);
  s.set_routing(v1::VirtualTestbedSpec::ROUTING_BGP);
  auto plan = testbed::plan_testbed(s);
  EXPECT_TRUE(plan.ok()) << plan.status().to_string();
  return plan.ok() ? *plan : testbed::TestbedPlan{};
}

// A leaf's routes as read_bgp_routes gives them, from a table.
std::vector<std::pair<std::string, size_t>> routes_of(const BgpTable& table, const std::string& leaf) {
  std::vector<std::pair<std::string, size_t>> out;
  for (const auto& [key, hops] : table) {
    if (key.first == leaf) out.emplace_back(key.second, hops);
  }
  return out;
}

// The fabric's routes whole and without the link leaf0 - spine1.
class BgpPhasesTest : public ::testing::Test {
 protected:
  const testbed::TestbedPlan plan = bgp_plan();
  const BgpTable whole = expected_bgp_table(plan);
  const BgpTable without = expected_bgp_table(plan, "tb-leaf0", "tb-spine1");
};

TEST_F(BgpPhasesTest, WithoutALinkItsLeafAndTheOthersRoutesToItKeepOneSpineFewer) {
  ASSERT_FALSE(whole.empty());
  ASSERT_EQ(whole.size(), without.size()) << "one spine is left: every prefix stays reachable";
  for (const auto& [key, hops] : whole) {
    EXPECT_EQ(hops, 2u);
    EXPECT_EQ(without.at(key), 1u) << key.first << " " << key.second
                                   << ": with 2 leaves every route crosses the failed link's ends";
  }
}

TEST_F(BgpPhasesTest, TimesDetectionConvergenceAndReturnFromWhatTheLeavesHeld) {
  std::vector<BgpObservation> seen = {
      {100, "tb-leaf0", routes_of(whole, "tb-leaf0")},
      {100, "tb-leaf1", routes_of(whole, "tb-leaf1")},
      // A change before the failure (say, another run's routes settling) is not a withdrawal.
      {150, "tb-leaf1", routes_of(without, "tb-leaf1")},
      {180, "tb-leaf1", routes_of(whole, "tb-leaf1")},
      // Failed at 1000: leaf0 drops the spine at 1300, leaf1 at 1450.
      {1300, "tb-leaf0", routes_of(without, "tb-leaf0")},
      {1450, "tb-leaf1", routes_of(without, "tb-leaf1")},
      // Returned at 5000: leaf1 takes it back at 5200, leaf0 at 5900.
      {5200, "tb-leaf1", routes_of(whole, "tb-leaf1")},
      {5900, "tb-leaf0", routes_of(whole, "tb-leaf0")},
  };
  const BgpPhases p = bgp_phases(seen, whole, without, 1000, 5000);
  EXPECT_EQ(p.first_withdrawal, 1300u);
  EXPECT_EQ(p.converged, 1450u);
  EXPECT_EQ(p.restored, 5900u);

  // Before the routes are back the run ends: no return; before a second leaf moves, no convergence.
  seen.resize(5);
  const BgpPhases cut = bgp_phases(seen, whole, without, 1000, 5000);
  EXPECT_EQ(cut.first_withdrawal, 1300u);
  EXPECT_FALSE(cut.converged.has_value());
  EXPECT_FALSE(cut.restored.has_value());
}

TEST_F(BgpPhasesTest, AFailureNoRouteNoticedHasNoPhases) {
  const std::vector<BgpObservation> seen = {{100, "tb-leaf0", routes_of(whole, "tb-leaf0")},
                                            {100, "tb-leaf1", routes_of(whole, "tb-leaf1")}};
  const BgpPhases p = bgp_phases(seen, whole, without, 1000, 1200);
  EXPECT_FALSE(p.first_withdrawal.has_value());
  EXPECT_FALSE(p.converged.has_value());
  EXPECT_FALSE(p.restored.has_value());
}

TEST_F(BgpPhasesTest, ARouteGoneAltogetherIsAWithdrawal) {
  // leaf0 loses its routes for a moment while its sessions reset, then holds one spine.
  const std::vector<BgpObservation> seen = {{100, "tb-leaf0", routes_of(whole, "tb-leaf0")},
                                            {100, "tb-leaf1", routes_of(whole, "tb-leaf1")},
                                            {1100, "tb-leaf0", {}},
                                            {1200, "tb-leaf0", routes_of(without, "tb-leaf0")},
                                            {1250, "tb-leaf1", routes_of(without, "tb-leaf1")}};
  const BgpPhases p = bgp_phases(seen, whole, without, 1000, 0);
  EXPECT_EQ(p.first_withdrawal, 1100u);
  EXPECT_EQ(p.converged, 1250u);
  EXPECT_FALSE(p.restored.has_value()) << "it never returned";
}

}  // namespace
}  // namespace collide::orchestrator::faults
