// `collide run` as a nightly CI gate on a virtual testbed: a scenario whose expectation fails exits 1
// and writes JUnit XML in which a JUnit reader (python3-junitparser) finds that case failed and the
// others passed; one whose expectations all hold exits 0. Needs root (namespaces, BPF, AF_XDP).
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

class CollideRunGatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("gt", "collide-run-gates");
  }
  void TearDown() override { run_dir_.reset(); }

  // 2 hosts x 1 rank on one leaf over links shaped to 2 Gbit/s, 10 all-reduces of 1 MiB, clean and
  // with 2% loss towards host 1 (about 1 s in all); `expect` is the scenario's expectation list.
  std::filesystem::path write_scenario(const std::string& name, const std::string& expect) {
    const auto path = run_dir_->dir() / (name + ".yaml");
    std::ofstream(path) << fmt::format(R"(name: {}
testbed:
  virtual: {{name: {}, hosts: 2, nics_per_host: 1, leaves: 1, spines: 0, host_link_gbps: 2}}
  ranks_per_host: 1
workload:
  collectives: {{kind: all-reduce, bytes: 1MiB, count: 10}}
transport: {{mtu_bytes: 1024, timeout_exponent: 14}}
faults:
  - {{name: lossy-h1, kind: loss, link: h1, direction: to-host, probability: 2%, seed: 7, roce_only: true}}
runs:
  baseline: true
  variants:
    - {{name: loss, faults: [lossy-h1]}}
outputs: {{html: false}}
expect:
{})",
                                       name, run_dir_->bed(), expect);
    return path;
  }

  // `collide run` with --junit, then the file as junitparser reads it (one line per suite and case).
  std::pair<process::CommandResult, std::string> run_with_junit(const std::filesystem::path& scenario) {
    const auto junit = run_dir_->dir() / (scenario.stem().string() + "-junit.xml");
    auto run = process::run_command({COLLIDE_BIN, "run", scenario.string(), "--output",
                                     (run_dir_->dir() / scenario.stem()).string(), "--junit", junit.string()});
    EXPECT_TRUE(run.ok());
    auto read = process::run_command({"/usr/bin/python3", COLLIDE_READ_JUNIT, junit.string()});
    EXPECT_TRUE(read.ok());
    EXPECT_EQ(read->exit_code, 0) << read->output;
    return {run.ok() ? *run : process::CommandResult{}, read.ok() ? read->output : ""};
  }

  std::optional<testing::CollideRunDir> run_dir_;
};

// Holds on any machine, fast or loaded; the 99.99% bound keeps a seeded draw's chance of falling
// outside it far below one nightly failure a decade.
constexpr const char* kHolding = R"(  - {name: nothing failed, no_failed_runs: true}
  - {variant: loss, slowdown_below: 100, of: mean}
  - {variant: baseline, p99_below_ns: 30s}
  - {fault_within_bound: lossy-h1, confidence: 99.99%}
  - {variant: baseline, busbw_at_least: 1%, collective: all-reduce}
)";

TEST_F(CollideRunGatesTest, AFailingExpectationExitsOneAndIsTheFailedCaseOfTheJUnitFile) {
  const auto scenario = write_scenario("gates-fail", std::string(kHolding) +
                                                         "  - {name: impossibly fast, variant: baseline, "
                                                         "jct_below_ns: 1us, of: mean}\n");
  const auto [run, cases] = run_with_junit(scenario);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("expectations: 5 of 6 hold"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("FAIL   impossibly fast"), std::string::npos) << run.output;
  EXPECT_EQ(cases.rfind("suite|gates-fail|6|1|0|", 0), 0u) << cases;
  EXPECT_NE(cases.find("case|pass|nothing failed|\n"), std::string::npos) << cases;
  // The line rate is the testbed's shaped host links.
  EXPECT_NE(cases.find("case|pass|baseline: busbw >= 1% of 2 Gbit/s line rate for all_reduce|\n"), std::string::npos)
      << cases;
  EXPECT_NE(cases.find("case|pass|lossy-h1: packets acted on within the fault's 99.99% bound|\n"), std::string::npos)
      << cases;
  EXPECT_NE(cases.find("case|failure|impossibly fast|JCT "), std::string::npos) << cases;
  EXPECT_NE(cases.find(" is not below 1 us\n"), std::string::npos) << cases;
  EXPECT_FALSE(run_dir_->namespaces_left());
}

TEST_F(CollideRunGatesTest, ExpectationsThatHoldExitZero) {
  const auto scenario = write_scenario("gates-hold", kHolding);
  const auto [run, cases] = run_with_junit(scenario);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("expectations: 5 of 5 hold"), std::string::npos) << run.output;
  EXPECT_EQ(cases.rfind("suite|gates-hold|5|0|0|", 0), 0u) << cases;
  EXPECT_EQ(cases.find("case|failure"), std::string::npos) << cases;
  EXPECT_EQ(cases.find("case|error"), std::string::npos) << cases;
  EXPECT_FALSE(run_dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
