// configs/bench/: a scenario per test of the IETF BMWG AI-fabric training benchmark, at testbed
// scale. Each loads (a sweep's every point) and is what its name says it measures.
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "orchestrator/scenario/sweep_grid.h"

namespace collide::orchestrator {
namespace {

std::map<std::string, ScenarioGrid> load_profiles() {
  std::map<std::string, ScenarioGrid> profiles;
  for (const auto& entry : std::filesystem::directory_iterator(COLLIDE_CONFIGS_DIR "/bench")) {
    if (entry.path().extension() != ".yaml") continue;
    auto grid = load_scenario_grid(entry.path().string());
    EXPECT_TRUE(grid.ok()) << entry.path() << ": " << grid.status().to_string();
    if (grid.ok()) profiles.emplace(entry.path().stem().string(), std::move(grid).value());
  }
  return profiles;
}

TEST(BenchProfilesTest, EveryProfileLoadsAndMeasuresWhatItsNameSays) {
  const auto profiles = load_profiles();
  ASSERT_EQ(profiles.size(), 5u);

  // ECMP polarization: QPs per connection swept over a fabric of two spines, under five-tuple ECMP.
  const ScenarioGrid& ecmp = profiles.at("ecmp-polarization");
  ASSERT_EQ(ecmp.fields.size(), 1u);
  EXPECT_EQ(ecmp.fields[0].field, "transport.qps_per_connection");
  ASSERT_EQ(ecmp.points.size(), 4u);
  EXPECT_EQ(ecmp.points.back().scenario.transport().qps_per_connection(), 8u);
  EXPECT_EQ(ecmp.points[0].scenario.testbed().virtual_().spines(), 2u);
  EXPECT_EQ(ecmp.points[0].scenario.testbed().virtual_().load_balancing(), v1::VirtualTestbedSpec::LOAD_BALANCING_ECMP);

  // Incast: seven senders to one, sizes swept, without and with DCQCN, through a marking port.
  const ScenarioGrid& incast = profiles.at("incast");
  ASSERT_EQ(incast.points.size(), 2u);
  const v1::Scenario& first = incast.points[0].scenario;
  EXPECT_EQ(first.workload().incast().senders(), 7u);
  EXPECT_GT(first.testbed().virtual_().leaf_down().ecn().kmin_bytes(), 0u);
  ASSERT_EQ(first.runs().variants_size(), 1);
  EXPECT_TRUE(first.runs().variants(0).transport().dcqcn());

  // Link failure: an outage's length swept on a transport with a known retry budget.
  const ScenarioGrid& failure = profiles.at("link-failure");
  ASSERT_EQ(failure.fields.size(), 1u);
  EXPECT_EQ(failure.fields[0].field, "faults[0].duration_ns");
  EXPECT_EQ(failure.points[0].scenario.faults(0).kind(), v1::Fault::KIND_BLACKHOLE);
  EXPECT_EQ(failure.points[0].scenario.transport().retry_count(), 2u);

  // Multi-tenancy: two jobs on disjoint hosts sharing the spine, each also run alone.
  const v1::Scenario& tenants = profiles.at("multi-tenant").points.at(0).scenario;
  ASSERT_EQ(tenants.jobs_size(), 2);
  EXPECT_EQ(tenants.jobs(1).workload().collectives().kind(), v1::OP_KIND_ALL_TO_ALL);
  EXPECT_TRUE(tenants.runs().alone());

  // Soak: an hour of iterations with a fault variant beside the baseline.
  const v1::Scenario& soak = profiles.at("soak").points.at(0).scenario;
  EXPECT_EQ(soak.runs().duration_ns(), 3'600'000'000'000u);
  EXPECT_EQ(soak.runs().variants_size(), 1);
}

}  // namespace
}  // namespace collide::orchestrator
