#include "orchestrator/scenario/sweep_grid.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>

#include "common/input_limits.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator {
namespace {

using ::testing::HasSubstr;

Result<ScenarioGrid> grid_of(const std::string& text) { return expand_scenario_grid(YAML::Load(text), "sweep.yaml"); }

// Two virtual hosts, an all-reduce, a baseline and one lossy variant; lines 1-12, the fault's
// probability on line 10 and the transport on line 7.
std::string scenario(const std::string& probability, const std::string& qps = "1",
                     const std::string& bytes = "64KiB", const std::string& duration = "0") {
  return fmt::format(R"(name: sweep
testbed:
  virtual: {{hosts: 2}}
  ranks_per_host: 1
workload:
  collectives: {{kind: all-reduce, bytes: {}, count: 2}}
transport: {{qps_per_connection: {}}}
faults:
  - name: loss
    probability: {}
    kind: loss
    duration_ns: {}
    link: h1
    direction: to-host
runs: {{baseline: true, variants: [{{name: lossy, faults: [loss]}}], repetitions: 1}}
)",
                     bytes, qps, probability, duration);
}

TEST(SweepGridTest, AScenarioWithoutSweepsIsItsOnePoint) {
  auto grid = grid_of(scenario("1%"));
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  EXPECT_FALSE(grid->swept());
  ASSERT_EQ(grid->points.size(), 1u);
  EXPECT_TRUE(grid->points[0].settings.empty());
  EXPECT_DOUBLE_EQ(grid->points[0].scenario.faults(0).probability(), 0.01);
}

TEST(SweepGridTest, ASweptProbabilityMakesOnePointPerValueInTheFieldsUnits) {
  auto grid = grid_of(scenario("{sweep: [0.001, 1%, 5%]}"));
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  ASSERT_EQ(grid->fields.size(), 1u);
  EXPECT_EQ(grid->fields[0].field, "faults[0].probability");
  EXPECT_EQ(grid->fields[0].line, 10);
  ASSERT_EQ(grid->points.size(), 3u);
  const double expected[] = {0.001, 0.01, 0.05};
  const char* texts[] = {"0.001", "1%", "5%"};
  for (size_t i = 0; i < 3; ++i) {
    const auto& p = grid->points[i];
    EXPECT_DOUBLE_EQ(p.scenario.faults(0).probability(), expected[i]);
    ASSERT_EQ(p.settings.size(), 1u);
    EXPECT_EQ(p.settings[0].field(), "faults[0].probability");
    EXPECT_EQ(p.settings[0].text(), texts[i]);
    EXPECT_DOUBLE_EQ(p.settings[0].value(), expected[i]);
    // Everything else is the scenario as written.
    EXPECT_EQ(p.scenario.runs().variants_size(), 1);
    EXPECT_EQ(p.scenario.workload().collectives().bytes(), 65536u);
  }
  EXPECT_EQ(point_label(grid->points[1].settings), "faults[0].probability=1%");
}

TEST(SweepGridTest, SeveralSweptFieldsMakeTheirProductTheLastVaryingFastest) {
  auto grid = grid_of(scenario("{sweep: [1%, 2%]}", "{sweep: [1, 4, 8]}", "{sweep: [4KiB, 1MiB]}", "{sweep: [100ms, 1s]}"));
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  ASSERT_EQ(grid->fields.size(), 4u);
  // In the order they are written: workload, transport, then the fault's two fields.
  EXPECT_EQ(grid->fields[0].field, "workload.collectives.bytes");
  EXPECT_EQ(grid->fields[1].field, "transport.qps_per_connection");
  EXPECT_EQ(grid->fields[2].field, "faults[0].probability");
  EXPECT_EQ(grid->fields[3].field, "faults[0].duration_ns");
  ASSERT_EQ(grid->points.size(), 2u * 3u * 2u * 2u);
  std::set<std::vector<double>> distinct;
  for (const auto& p : grid->points) {
    const v1::Scenario& s = p.scenario;
    distinct.insert({static_cast<double>(s.workload().collectives().bytes()),
                     static_cast<double>(s.transport().qps_per_connection()), s.faults(0).probability(),
                     static_cast<double>(s.faults(0).duration_ns())});
    ASSERT_EQ(p.settings.size(), 4u);
    EXPECT_DOUBLE_EQ(p.settings[0].value(), static_cast<double>(s.workload().collectives().bytes()));
    EXPECT_DOUBLE_EQ(p.settings[3].value(), static_cast<double>(s.faults(0).duration_ns()));
  }
  EXPECT_EQ(distinct.size(), grid->points.size());
  EXPECT_EQ(grid->points[0].scenario.faults(0).duration_ns(), 100'000'000u);
  EXPECT_EQ(grid->points[1].scenario.faults(0).duration_ns(), 1'000'000'000u);
  EXPECT_EQ(grid->points[1].scenario.faults(0).probability(), 0.01);
  EXPECT_EQ(grid->points.back().scenario.workload().collectives().bytes(), 1u << 20);
  EXPECT_EQ(grid->points.back().scenario.transport().qps_per_connection(), 8u);
}

TEST(SweepGridTest, AGridPastTheLimitIsRefusedAtTheFieldThatTakesItThere) {
  std::string qps;
  for (uint32_t i = 1; i <= 9; ++i) qps += fmt::format("{}{}", i > 1 ? ", " : "", i);
  std::string probabilities;
  for (uint32_t i = 1; i <= 8; ++i) probabilities += fmt::format("{}{}%", i > 1 ? ", " : "", i);
  ASSERT_GT(9u * 8u, limits::kMaxSweepPoints);
  auto grid = grid_of(scenario("{sweep: [" + probabilities + "]}", "{sweep: [" + qps + "]}"));
  ASSERT_THAT(grid, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(grid.status().message(), HasSubstr("sweep.yaml:10: faults[0].probability: the sweep's grid has 72 "
                                                 "points or more (9 x 8)"));
  EXPECT_THAT(grid.status().message(), HasSubstr("common/input_limits.h"));
  // 8 x 8 = 64 is within it.
  auto fits = grid_of(scenario("{sweep: [" + probabilities + "]}", "{sweep: [1, 2, 3, 4, 5, 6, 7, 8]}"));
  ASSERT_TRUE(fits.ok()) << fits.status().to_string();
  EXPECT_EQ(fits->points.size(), 64u);
}

TEST(SweepGridTest, ABadSweptValueIsRefusedAsTheFieldWouldRefuseItWithItsPoint) {
  auto above_one = grid_of(scenario("{sweep: [1%, 1.5]}"));
  ASSERT_THAT(above_one, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(above_one.status().message(),
              HasSubstr("sweep.yaml:10: faults[0].probability: must be within 0..1 (or 0%..100%)"));
  EXPECT_THAT(above_one.status().message(), HasSubstr("point 2 of 2: faults[0].probability=1.5"));

  auto zero = grid_of(scenario("{sweep: [0, 1%]}"));
  ASSERT_THAT(zero, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(zero.status().message(), HasSubstr("sweep.yaml:10: faults[0].probability: this kind of fault needs a probability"));

  auto not_a_number = grid_of(scenario("1%", "{sweep: [1, many]}"));
  ASSERT_THAT(not_a_number, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(not_a_number.status().message(), HasSubstr("sweep.yaml:7: transport.qps_per_connection: 'many' is not a number"));

  auto too_many_qps = grid_of(scenario("1%", "{sweep: [1, 100000]}"));
  ASSERT_THAT(too_many_qps, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(too_many_qps.status().message(), HasSubstr("sweep.yaml:7: transport.qps_per_connection"));
  EXPECT_THAT(too_many_qps.status().message(), HasSubstr("transport.qps_per_connection=100000"));

  auto wrong_unit = grid_of(scenario("1%", "1", "{sweep: [4KiB, 10ms]}"));
  ASSERT_THAT(wrong_unit, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(wrong_unit.status().message(), HasSubstr("sweep.yaml:6: workload.collectives.bytes: unit 'ms' does not fit"));
}

TEST(SweepGridTest, ARecurringFaultsMtbfSweepsInNanoseconds) {
  std::string flap = scenario("0", "1", "64KiB", "20ms");
  flap.replace(flap.find("kind: loss"), 10, "kind: link-flap");
  flap.replace(flap.find("    link: h1"), 0, "    mtbf_ns: {sweep: [1s, 10s]}\n");
  auto grid = grid_of(flap);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  ASSERT_EQ(grid->points.size(), 2u);
  EXPECT_EQ(grid->points[0].scenario.faults(0).mtbf_ns(), 1'000'000'000u);
  EXPECT_EQ(grid->points[1].scenario.faults(0).mtbf_ns(), 10'000'000'000u);
  EXPECT_EQ(grid->points[1].settings[0].field(), "faults[0].mtbf_ns");
  EXPECT_DOUBLE_EQ(grid->points[1].settings[0].value(), 1e10);
}

TEST(SweepGridTest, ALinkFlapsDurationSweepsInNanosecondsAndAZeroIsRefusedAsAFlapRefusesIt) {
  std::string flap = scenario("0");
  flap.replace(flap.find("kind: loss"), 10, "kind: link-flap");
  auto grid = grid_of(std::string(flap).replace(flap.find("duration_ns: 0"), 14, "duration_ns: {sweep: [50ms, 200ms]}"));
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  ASSERT_EQ(grid->points.size(), 2u);
  EXPECT_EQ(grid->points[1].scenario.faults(0).duration_ns(), 200'000'000u);
  EXPECT_DOUBLE_EQ(grid->points[1].settings[0].value(), 2e8);
  EXPECT_EQ(grid->points[1].settings[0].field(), "faults[0].duration_ns");

  auto zero = grid_of(std::string(flap).replace(flap.find("duration_ns: 0"), 14, "duration_ns: {sweep: [50ms, 0]}"));
  ASSERT_THAT(zero, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(zero.status().message(), HasSubstr("sweep.yaml:12: faults[0].duration_ns: a flap or blackhole needs a duration"));
  EXPECT_THAT(zero.status().message(), HasSubstr("point 2 of 2: faults[0].duration_ns=0"));
}

TEST(SweepGridTest, SweepsWrittenWronglyAreRefusedWithFileLineAndField) {
  auto unsweepable = grid_of(scenario("1%").replace(scenario("1%").find("hosts: 2"), 8, "hosts: {sweep: [2, 3]}"));
  ASSERT_THAT(unsweepable, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(unsweepable.status().message(),
              HasSubstr("sweep.yaml:3: testbed.virtual.hosts: cannot be swept (the fields that can: "
                        "faults[*].probability, faults[*].duration_ns"));

  auto empty = grid_of(scenario("{sweep: []}"));
  ASSERT_THAT(empty, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(empty.status().message(), HasSubstr("sweep.yaml:10: faults[0].probability: a sweep needs a list"));

  auto scalar = grid_of(scenario("{sweep: 1%}"));
  ASSERT_THAT(scalar, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(scalar.status().message(), HasSubstr("sweep.yaml:10: faults[0].probability: a sweep needs a list"));

  auto extra = grid_of(scenario("{sweep: [1%, 2%], step: 1%}"));
  ASSERT_THAT(extra, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(extra.status().message(), HasSubstr("sweep.yaml:10: faults[0].probability: a sweep is written"));

  auto nested = grid_of(scenario("{sweep: [1%, [2%, 3%]]}"));
  ASSERT_THAT(nested, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(nested.status().message(), HasSubstr("sweep.yaml:10: faults[0].probability.sweep[1]: each value"));

  auto twice = grid_of(scenario("{sweep: [1%, 2%, 0.01]}"));
  ASSERT_THAT(twice, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(twice.status().message(),
              HasSubstr("sweep.yaml:10: faults[0].probability: '1%' and '0.01' are the same value"));

  // A plain list where one value belongs stays the mapper's error: a sweep is always marked.
  auto plain_list = grid_of(scenario("[1%, 2%]"));
  ASSERT_THAT(plain_list, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(plain_list.status().message(), HasSubstr("sweep.yaml:10: faults[0].probability: expected a single value"));
}

TEST(SweepGridTest, EverySweepInConfigsLoads) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(COLLIDE_CONFIGS_DIR) + "/sweeps")) {
    if (entry.path().extension() != ".yaml") continue;
    auto grid = load_scenario_grid(entry.path().string());
    ASSERT_TRUE(grid.ok()) << entry.path() << ": " << grid.status().to_string();
    EXPECT_TRUE(grid->swept()) << entry.path();
    ++loaded;
  }
  EXPECT_GE(loaded, 1);
}

}  // namespace
}  // namespace collide::orchestrator
