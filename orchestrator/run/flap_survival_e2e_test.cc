// The shipped survival sweep through `collide run`: host 1's link dead for 20 to 140 ms while a small
// all-reduce runs on 2 virtual hosts, with 33.6 ms per attempt and 2 retries (100.7 ms). The job
// must survive the short flaps and die of exceeded retries on the long ones, each death naming its
// QP, and the limit found must lie within one sweep step of the arithmetic. Needs root
// (namespaces, BPF, AF_XDP).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class FlapSurvivalRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("fs", "collide-flap-survival");
  }
  void TearDown() override { run_dir_.reset(); }
  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(FlapSurvivalRunTest, TheLimitFoundIsWithinOneStepOfTheRetryArithmeticAndDeathsNameTheirQp) {
  const auto scenario = run_dir_->scenario_on_own_bed(COLLIDE_CONFIGS_DIR "/sweeps/flap-survival.yaml", "fsurv");
  ASSERT_FALSE(scenario.empty());
  const auto out = run_dir_->dir() / "results";
  const auto started = std::chrono::steady_clock::now();
  auto run = process::run_command({COLLIDE_BIN, "run", scenario.string(), "--output", out.string()});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  std::cout << fmt::format("the survival sweep took {:.1f} s\n", seconds);
  const auto sweep = nlohmann::json::parse(read(out / "sweep.json"), nullptr, false);
  ASSERT_TRUE(sweep.is_object()) << run->output;
  const auto& s = sweep["survival"];
  ASSERT_TRUE(s.is_object()) << sweep.dump();
  std::cout << "survival: " << s.dump(2) << "\n";
  // The arithmetic, from the scenario's transport: 4.096 us x 2^13 per attempt, 2 retries.
  EXPECT_EQ(s["field"], "faults[0].duration_ns");
  EXPECT_EQ(s["variant"], "outage");
  EXPECT_DOUBLE_EQ(s["timeout_ms"].get<double>(), 33.554432);
  EXPECT_EQ(s["attempts"], 3u);
  EXPECT_DOUBLE_EQ(s["limit_ms"].get<double>(), 100.663296);

  ASSERT_EQ(s["points"].size(), 5u);
  size_t survived = 0, died = 0;
  static const std::regex qp("0x[0-9a-f]+");
  for (const auto& p : s["points"]) {
    if (p["survived"].get<bool>()) {
      ++survived;
      continue;
    }
    ++died;
    EXPECT_TRUE(std::regex_match(p["qp"].get<std::string>(), qp)) << p.dump();
    EXPECT_NE(p["failure"].get<std::string>().find("IBV_WC_RETRY_EXC_ERR) on QP " + p["qp"].get<std::string>()),
              std::string::npos)
        << p.dump();
    EXPECT_GE(p["rank"].get<int>(), 0) << p.dump();
    EXPECT_GE(p["peer_rank"].get<int>(), 0) << p.dump();
    EXPECT_NE(p["rank"], p["peer_rank"]) << p.dump();
    EXPECT_FALSE(p["host"].get<std::string>().empty()) << p.dump();
  }
  // The sweep brackets the limit, and what it found agrees with the arithmetic within a step.
  EXPECT_GT(survived, 0u);
  EXPECT_GT(died, 0u);
  EXPECT_TRUE(s["within_one_step"].get<bool>()) << s["verdict"];
  // Survival decided by the arithmetic is the run's verdict: dying is the measurement, not a failure.
  EXPECT_EQ(run->exit_code, 0) << run->output;
  EXPECT_NE(run->output.find("within one step"), std::string::npos) << run->output;
  const std::string html = read(out / "report.html");
  EXPECT_NE(html.find("id=\"survival\""), std::string::npos);
  EXPECT_LT(seconds, 90);
  EXPECT_FALSE(run_dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
