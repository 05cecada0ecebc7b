// `collide run --junit` where the run cannot judge its expectations: a scenario refused by its check
// (exit 2) and a run that fails before it has results (exit 1) still leave a JUnit file, whose
// cases are errors that say why. Needs no root: neither starts a testbed.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/process.h"

namespace collide {
namespace {

namespace fs = std::filesystem;

class RunGatesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collide-gates-cli-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  process::CommandResult run(const std::string& yaml) {
    std::ofstream(dir_ / "s.yaml") << yaml;
    auto r = process::run_command({COLLIDE_BIN, "run", (dir_ / "s.yaml").string(), "--output",
                                   (dir_ / "out").string(), "--junit", (dir_ / "junit.xml").string()});
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : process::CommandResult{};
  }
  std::string junit_cases() {
    auto read = process::run_command({"/usr/bin/python3", COLLIDE_READ_JUNIT, (dir_ / "junit.xml").string()});
    EXPECT_TRUE(read.ok());
    EXPECT_EQ(read->exit_code, 0) << read->output;
    return read.ok() ? read->output : "";
  }
  fs::path dir_;
};

TEST_F(RunGatesCliTest, ARefusedScenarioLeavesOneCaseInErrorWithTheLine) {
  std::ofstream(dir_ / "junit.xml") << "an earlier run's file";
  const auto r = run(R"(name: refused
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
runs:
  baseline: true
expect:
  - {variant: nope, slowdown_below: 2}
)");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string cases = junit_cases();
  EXPECT_EQ(cases.rfind("suite|s|1|0|1|", 0), 0u) << cases;
  EXPECT_NE(cases.find("case|error|scenario check|" + (dir_ / "s.yaml").string() +
                       ":7: expect[0].variant: no variant 'nope' runs in this scenario"),
            std::string::npos)
      << cases;
}

// Agents no one can reach without certificates: the runner fails before any replay.
TEST_F(RunGatesCliTest, ARunThatFailsLeavesEveryExpectationInError) {
  const auto r = run(R"(name: unreachable
testbed:
  agents:
    - {address: "127.0.0.1:1", host: 0}
    - {address: "127.0.0.1:2", host: 1}
  ranks_per_host: 1
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
runs:
  baseline: true
expect:
  - {no_failed_runs: true}
  - {name: quick, variant: baseline, jct_below_ns: 5s, of: mean}
)");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ERROR  quick"), std::string::npos) << r.output;
  const std::string cases = junit_cases();
  EXPECT_EQ(cases.rfind("suite|unreachable|2|0|2|", 0), 0u) << cases;
  EXPECT_NE(cases.find("case|error|every variant: no failed runs|not evaluated: the run failed: remote agents need "
                       "--certs"),
            std::string::npos)
      << cases;
  EXPECT_NE(cases.find("case|error|quick|not evaluated: the run failed:"), std::string::npos) << cases;
  std::stringstream xml;
  xml << std::ifstream(dir_ / "junit.xml").rdbuf();
  EXPECT_NE(xml.str().find("<system-err>remote agents need --certs"), std::string::npos) << xml.str();
}

// Results that cannot be written (a file where the results directory goes) fail the run with
// exit 1 and a message naming the place, before any testbed is built; the JUnit file says why.
TEST_F(RunGatesCliTest, AResultsDirectoryThatCannotBeMadeIsRefusedWithItsJUnitError) {
  std::ofstream(dir_ / "out") << "a file, not a directory";
  const auto r = run(R"(name: unwritable
testbed:
  virtual: {name: nowr, hosts: 2, leaves: 1, spines: 1}
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
runs:
  baseline: true
expect:
  - {variant: baseline, no_failed_runs: true}
)");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot create the results directory " + (dir_ / "out").string()), std::string::npos)
      << r.output;
  EXPECT_NE(junit_cases().find("case|error|"), std::string::npos);
}

}  // namespace
}  // namespace collide
