// The demo, as the README runs it (ci/demo.sh, on this build): a measurable slowdown under loss,
// larger with go-back-N than with selective repeat; and a scenario that cannot run starts nothing.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/parse_number.h"
#include "common/process.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

const nlohmann::json* variant(const nlohmann::json& report, const std::string& name) {
  for (const auto& v : report["variants"]) {
    if (v["name"] == name) return &v;
  }
  return nullptr;
}

// report.json is protobuf's JSON of v1::Results: 64-bit counters are quoted strings.
uint64_t u64(const nlohmann::json& v) {
  if (!v.is_string()) return v.get<uint64_t>();
  auto n = parse_number<uint64_t>(v.get<std::string>(), "report.json counter");
  EXPECT_TRUE(n.ok()) << n.status().message();
  return n.ok() ? *n : 0;
}

double median_jct(const nlohmann::json& variant) {
  std::vector<double> jct;
  for (const auto& s : variant["jct_seconds"]) jct.push_back(s.get<double>());
  if (jct.empty()) return 0;
  std::sort(jct.begin(), jct.end());
  return jct[jct.size() / 2];
}

TEST(DemoTest, LossSlowsTheJobAndGoBackNSuffersMost) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_bpf());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  const auto out = std::filesystem::temp_directory_path() / ("collide-demo-" + std::to_string(getpid()));
  // The README's main command itself, told to reuse this build (it installs nothing that is
  // there, and brings the collide binary up to date, which it is).
  auto run = process::run_command({"/usr/bin/env", "COLLIDE_BUILD_DIR=" COLLIDE_BUILD_DIR, COLLIDE_SOURCE_DIR "/ci/demo.sh",
                                   std::string(COLLIDE_CONFIGS_DIR) + "/demo.yaml", "--output", out.string()});
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->exit_code, 0) << run->output;
  std::ifstream in(out / "report.json");
  ASSERT_TRUE(in.good());
  const auto report = nlohmann::json::parse(in);
  const auto* base = variant(report, "baseline");
  const auto* gbn = variant(report, "loss-go-back-n");
  const auto* sr = variant(report, "loss-selective-repeat");
  ASSERT_TRUE(base && gbn && sr) << report.dump(2);
  for (const auto* v : {base, gbn, sr}) EXPECT_EQ((*v)["failed_runs"], 0) << (*v)["failures"];
  // Medians over the repetitions: on a small shared machine one repetition in a few is slowed by
  // something else, and a mean would follow it.
  const double gbn_slowdown = median_jct(*gbn) / median_jct(*base);
  const double sr_slowdown = median_jct(*sr) / median_jct(*base);
  std::cout << "slowdown under 1% loss (medians): go-back-N " << gbn_slowdown
            << "x, selective repeat " << sr_slowdown << "x; means with 95% CI: go-back-N "
            << (*gbn)["slowdown_mean"] << " " << (*gbn)["slowdown_ci95"] << ", selective repeat "
            << (*sr)["slowdown_mean"] << " " << (*sr)["slowdown_ci95"] << "\n";
  EXPECT_GT(gbn_slowdown, 1.1);
  EXPECT_GT(gbn_slowdown, sr_slowdown);
  EXPECT_GT(u64((*gbn)["retransmitted_packets"]), 10 * u64((*sr)["retransmitted_packets"]));
  // Ground truth from the injector: about 1% of what crossed the faulted port was dropped.
  const auto& fault = (*gbn)["faults"][0];
  const double ratio = static_cast<double>(u64(fault["packets_acted"])) /
                       static_cast<double>(u64(fault["packets_matched"]));
  EXPECT_NEAR(ratio, 0.01, 0.001);
  // The flap (200 ms, under the retry budget) and the slow receiver stall the job, not fail it,
  // and the report carries each one's window.
  for (const char* name : {"link-flap", "slow-receiver"}) {
    const auto* v = variant(report, name);
    ASSERT_TRUE(v) << name;
    EXPECT_EQ((*v)["failed_runs"], 0) << (*v)["failures"];
    ASSERT_FALSE((*v)["repetitions"].empty());
    EXPECT_FALSE((*v)["repetitions"][0]["fault_windows"].empty()) << name;
  }
  EXPECT_TRUE(std::filesystem::exists(out / "report.html"));
  std::filesystem::remove_all(out);
}

TEST(DemoTest, MalformedScenarioIsRefusedBeforeAnythingStarts) {
  const auto path = std::filesystem::temp_directory_path() / ("collide-bad-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(path) << "name: bad\nworkload:\n  collectives: {kind: all-reduce, bytes: 1MiB}\n"
                         "faults:\n  - {name: f, kind: loss, link: h7, probability: 1%}\n"
                         "runs: {baseline: true}\n";
  // Compared with what was there before: other testbeds may exist on a shared machine.
  auto before = process::run_command({COLLIDE_BIN, "testbed", "list"});
  ASSERT_TRUE(before.ok());
  auto run = process::run_command({COLLIDE_BIN, "run", path.string()});
  std::filesystem::remove(path);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 2);
  EXPECT_NE(run->output.find(":5: faults[0].link: no link 'h7'"), std::string::npos) << run->output;
  auto after = process::run_command({COLLIDE_BIN, "testbed", "list"});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->output, before->output) << "no testbed was built";
}

}  // namespace
}  // namespace collide
