// `collide plan` through the real binary: a small trace in, tables and JSON out.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>


#include "common/process.h"
#include "orchestrator/replay/transport_options.h"
#include "tests/support/all_reduce_trace.h"

namespace collide {
namespace {

class PlanCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("collide-plan-" + std::to_string(getpid()) + ".trace")).string();
    testing::write_all_reduce_trace(path_, 16, 16 << 20, /*declare_comm=*/true);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(PlanCommandTest, JsonAccountsHostPairsOfARingAllReduce) {
  auto out = process::run_command({COLLIDE_BIN, "plan", path_, "--ranks-per-host=8", "--json"});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->exit_code, 0) << out->output;
  const auto j = nlohmann::json::parse(out->output);
  // 16 ranks on 2 hosts: per channel the ring crosses each way once; the crossing rank sends
  // 2(n-1)/n of its channel's share.
  const uint64_t per_crossing = 2 * 15 * ((16u << 20) / 16);
  EXPECT_EQ(j["total_network_bytes"].get<uint64_t>(), 2 * per_crossing);
  ASSERT_EQ(j["host_pairs"].size(), 2u);
  EXPECT_EQ(j["host_pairs"][0]["bytes"].get<uint64_t>(), per_crossing);
  EXPECT_EQ(j["ranks"].size(), 16u);
}

// 8 ranks per host on 8 NICs: the ring's crossing rank (NIC 7) sends to NIC 0 of the other host,
// so PXN (NCCL's default) hands it over NVLink to the host's NIC 0 rank, which sends it; the
// same bytes cross between the hosts either way.
TEST_F(PlanCommandTest, CountsWhatPxnRelaysUnlessTurnedOff) {
  auto on = process::run_command({COLLIDE_BIN, "plan", path_, "--ranks-per-host=8", "--json"});
  auto off = process::run_command(
      {COLLIDE_BIN, "plan", path_, "--ranks-per-host=8", "--json", "--no-pxn"});
  ASSERT_TRUE(on.ok() && off.ok());
  ASSERT_EQ(on->exit_code, 0) << on->output;
  ASSERT_EQ(off->exit_code, 0) << off->output;
  const auto j_on = nlohmann::json::parse(on->output);
  const auto j_off = nlohmann::json::parse(off->output);
  const uint64_t per_crossing = 2 * 15 * ((16u << 20) / 16);
  EXPECT_TRUE(j_on["options"]["pxn"].get<bool>());
  EXPECT_FALSE(j_off["options"]["pxn"].get<bool>());
  EXPECT_EQ(j_on["total_pxn_relayed_bytes"].get<uint64_t>(), 2 * per_crossing);
  EXPECT_EQ(j_off["total_pxn_relayed_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(j_on["total_network_bytes"], j_off["total_network_bytes"]);
  EXPECT_EQ(j_on["host_pairs"], j_off["host_pairs"]);
  // Each of the 2 channels enters the hosts on its own rail: channel 0 leaves host 0 from rank 7
  // (NIC 7) for rank 8 (NIC 0), relayed by rank 0; channel 1 from rank 0 for rank 9 (NIC 1),
  // relayed by rank 1. Rank 7 then sends nothing over the network.
  EXPECT_EQ(j_on["ranks"][0]["pxn_relayed_bytes"].get<uint64_t>(), per_crossing / 2);
  EXPECT_EQ(j_on["ranks"][1]["pxn_relayed_bytes"].get<uint64_t>(), per_crossing / 2);
  EXPECT_EQ(j_on["ranks"][7]["network_sent_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(j_off["ranks"][7]["network_sent_bytes"].get<uint64_t>(), 0u);
}

// The slice `plan` expands with is the one default of orchestrator/replay/transport_options.h,
// which `replay` and `run` resolve too; a size given with a unit reads as common/units.h says.
TEST_F(PlanCommandTest, SliceBytesIsTheSharedDefaultAndTakesUnits) {
  auto out = process::run_command({COLLIDE_BIN, "plan", path_, "--json"});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->exit_code, 0) << out->output;
  EXPECT_EQ(nlohmann::json::parse(out->output)["options"]["slice_bytes"].get<uint64_t>(),
            orchestrator::replay::TransportDefaults::kSliceBytes);
  out = process::run_command({COLLIDE_BIN, "plan", path_, "--json", "--slice-bytes=64KB"});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->exit_code, 0) << out->output;
  EXPECT_EQ(nlohmann::json::parse(out->output)["options"]["slice_bytes"].get<uint64_t>(), 64'000u);
  out = process::run_command({COLLIDE_BIN, "plan", path_, "--slice-bytes=64 furlongs"});
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->exit_code, 0);
  EXPECT_NE(out->output.find("64 furlongs"), std::string::npos) << out->output;
}

TEST_F(PlanCommandTest, TableAndPerOpLines) {
  auto out = process::run_command({COLLIDE_BIN, "plan", path_, "--ops", "--rank=3"});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->exit_code, 0) << out->output;
  EXPECT_NE(out->output.find("all_reduce"), std::string::npos);
  EXPECT_NE(out->output.find("Per host pair"), std::string::npos);
  EXPECT_NE(out->output.find("1.875"), std::string::npos);  // busbw factor 2(n-1)/n
}

TEST_F(PlanCommandTest, BadInputIsAClearError) {
  auto missing = process::run_command({COLLIDE_BIN, "plan", "/nonexistent.trace"});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->exit_code, 2);
  EXPECT_NE(missing->output.find("/nonexistent.trace"), std::string::npos);
  auto bad_option = process::run_command({COLLIDE_BIN, "plan", path_, "--channels=0"});
  ASSERT_TRUE(bad_option.ok());
  EXPECT_NE(bad_option->exit_code, 0);
}

}  // namespace
}  // namespace collide

namespace collide {
namespace {

// 16 ranks, 4 per host on 4 hosts, 2 leaves (host h under leaf h % 2): in rank order every one
// of the ring's 4 host boundaries is a leaf boundary; grouped by leaf (topology), 2 of them are.
TEST_F(PlanCommandTest, TopologyRingOrderHalvesTheBytesBetweenLeaves) {
  auto rank = process::run_command(
      {COLLIDE_BIN, "plan", path_, "--ranks-per-host=4", "--leaves=2", "--json"});
  auto topology = process::run_command({COLLIDE_BIN, "plan", path_, "--ranks-per-host=4",
                                        "--leaves=2", "--ring-order=topology", "--json"});
  ASSERT_TRUE(rank.ok() && topology.ok());
  ASSERT_EQ(rank->exit_code, 0) << rank->output;
  ASSERT_EQ(topology->exit_code, 0) << topology->output;
  const auto j_rank = nlohmann::json::parse(rank->output);
  const auto j_topology = nlohmann::json::parse(topology->output);
  // Over both channels a host boundary carries 2 (n-1)/n of the buffer.
  const uint64_t per_crossing = 2 * 15 * ((16u << 20) / 16);
  EXPECT_EQ(j_rank["total_network_bytes"].get<uint64_t>(), 4 * per_crossing);
  EXPECT_EQ(j_topology["total_network_bytes"], j_rank["total_network_bytes"]);
  EXPECT_EQ(j_rank["between_leaves_bytes"].get<uint64_t>(), 4 * per_crossing);
  EXPECT_EQ(j_topology["between_leaves_bytes"].get<uint64_t>(), 2 * per_crossing);
}

TEST_F(PlanCommandTest, TopologyRingOrderWithoutLeavesIsRefused) {
  auto out = process::run_command(
      {COLLIDE_BIN, "plan", path_, "--ranks-per-host=4", "--ring-order=topology"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("--leaves"), std::string::npos) << out->output;
}

}  // namespace
}  // namespace collide

namespace collide {
namespace {

// A soak has no run count to give: `collide plan` says how long it lasts and what one iteration
// runs, in words and in JSON; a scenario of fixed repetitions keeps its count.
TEST(PlanScenarioTest, ASoakShowsItsDurationAndTheRunsOfAnIteration) {
  const auto path = std::filesystem::temp_directory_path() / ("collide-plan-soak-" + std::to_string(getpid()) + ".yaml");
  const std::string head = R"(name: soak
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
faults:
  - {name: lossy, kind: loss, link: h1, probability: 1%}
runs:
  baseline: true
  variants: [{name: loss, faults: [lossy]}]
)";
  std::ofstream(path) << head << "  duration_ns: 90m\n";
  auto text = process::run_command({COLLIDE_BIN, "plan", path.string()});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->exit_code, 0) << text->output;
  EXPECT_NE(text->output.find("a soak: iterations of 2 run(s) (baseline and variants) for 90m"), std::string::npos)
      << text->output;
  auto json = process::run_command({COLLIDE_BIN, "plan", path.string(), "--json"});
  ASSERT_TRUE(json.ok());
  const auto j = nlohmann::json::parse(json->output, nullptr, false);
  ASSERT_TRUE(j.is_object()) << json->output;
  EXPECT_EQ(j["duration_ns"], 5'400'000'000'000);
  EXPECT_EQ(j["duration"], "90m");
  EXPECT_EQ(j["runs_per_iteration"], 2);
  EXPECT_FALSE(j.contains("runs_per_point"));

  std::ofstream(path) << head << "  repetitions: 3\n";
  auto fixed = process::run_command({COLLIDE_BIN, "plan", path.string(), "--json"});
  ASSERT_TRUE(fixed.ok());
  const auto f = nlohmann::json::parse(fixed->output, nullptr, false);
  ASSERT_TRUE(f.is_object()) << fixed->output;
  EXPECT_EQ(f["runs_per_point"], 6);
  EXPECT_FALSE(f.contains("duration_ns"));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace collide
