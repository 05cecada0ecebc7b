#include "orchestrator/report/run_gates.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::report {
namespace {

namespace fs = std::filesystem;

class RunGatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collide-run-gates-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    scenario_.set_name("nightly");
    scenario_.mutable_runs()->set_baseline(true);
    v1::Expectation& e = *scenario_.add_expect();
    e.set_name("nothing fails");
    e.set_no_failed_runs(true);
    v1::VariantResults& base = *results_.add_variants();
    base.set_name("baseline");
    base.set_runs(2);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string read(const fs::path& path) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
  }

  fs::path dir_;
  v1::Scenario scenario_;
  v1::Results results_;
};

TEST_F(RunGatesTest, JudgesPrintsAndWritesTheJUnitFile) {
  const GateRun run{"nightly.yaml", dir_ / "junit.xml", std::chrono::system_clock::now()};
  const GateVerdict held = judge_run(scenario_, &results_, "", run);
  EXPECT_TRUE(held.all_hold);
  EXPECT_TRUE(held.junit.ok()) << held.junit.message();
  EXPECT_NE(held.summary.find("PASS   nothing fails"), std::string::npos) << held.summary;
  EXPECT_NE(read(dir_ / "junit.xml").find("<testcase name=\"nothing fails\""), std::string::npos);
  results_.mutable_variants(0)->set_failed_runs(1);
  const GateVerdict failed = judge_run(scenario_, &results_, "", run);
  EXPECT_FALSE(failed.all_hold);
  EXPECT_NE(read(dir_ / "junit.xml").find("failures=\"1\""), std::string::npos);
}

TEST_F(RunGatesTest, AJUnitFileThatCannotBeWrittenStillLeavesTheSummary) {
  const GateRun run{"nightly.yaml", dir_ / "missing" / "junit.xml", std::chrono::system_clock::now()};
  const GateVerdict verdict = judge_run(scenario_, nullptr, "the testbed did not come up", run);
  EXPECT_FALSE(verdict.all_hold);
  EXPECT_THAT(verdict.junit, StatusIs(StatusCode::kUnavailable));
  EXPECT_NE(verdict.junit.message().find("missing/junit.xml"), std::string::npos) << verdict.junit.message();
  EXPECT_NE(verdict.summary.find("ERROR  nothing fails"), std::string::npos) << verdict.summary;
}

TEST_F(RunGatesTest, WithoutExpectationsEverythingHoldsAndNothingIsPrinted) {
  scenario_.clear_expect();
  const GateRun run{"nightly.yaml", "", std::chrono::system_clock::now()};
  const GateVerdict verdict = judge_run(scenario_, &results_, "", run);
  EXPECT_TRUE(verdict.all_hold);
  EXPECT_TRUE(verdict.summary.empty());
  EXPECT_TRUE(fs::is_empty(dir_));  // no --junit, no file
}

TEST_F(RunGatesTest, ARefusedScenarioIsOneCaseInErrorInASuiteNamedAfterTheFile) {
  const GateRun run{"configs/nightly-gates.yaml", dir_ / "junit.xml", std::chrono::system_clock::now()};
  ASSERT_TRUE(write_junit_for_bad_scenario(run, "nightly-gates.yaml:3: name: a scenario needs a name").ok());
  const std::string xml = read(dir_ / "junit.xml");
  EXPECT_NE(xml.find("<testsuite name=\"nightly-gates\" tests=\"1\" failures=\"0\" errors=\"1\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase name=\"scenario check\""), std::string::npos) << xml;
  EXPECT_TRUE(write_junit_for_bad_scenario(GateRun{"x.yaml", "", {}}, "why").ok());  // no --junit: nothing
}

TEST_F(RunGatesTest, ASweepsSuiteSaysWhetherEveryPointRanAndWhetherTheSurvivalLimitAgrees) {
  const GateRun run{"flaps.yaml", "", std::chrono::system_clock::now()};
  const JUnitSuite clean = sweep_suite({"flaps", "", 3, 3, false, false, ""}, run);
  EXPECT_EQ(clean.name, "flaps (sweep)");
  EXPECT_EQ(clean.seconds, 0);  // the points' suites hold the time
  ASSERT_EQ(clean.cases.size(), 1u);
  EXPECT_EQ(clean.cases[0].name, "every point ran cleanly");
  EXPECT_EQ(clean.cases[0].verdict, Verdict::kPass);
  EXPECT_EQ(clean.cases[0].measured, "3 of 3 points");

  const JUnitSuite broken = sweep_suite(
      {"flaps", "\n  point 2 (flap=1s): host 0: exited\n  interrupted after point 2 of 3", 2, 3, true, false,
       "limit 0.5 s, arithmetic 1.9 s"},
      run);
  ASSERT_EQ(broken.cases.size(), 2u);
  EXPECT_EQ(broken.cases[0].verdict, Verdict::kError);
  EXPECT_EQ(broken.cases[0].measured, "2 of 3 points");
  EXPECT_EQ(broken.cases[0].message, "point 2 (flap=1s): host 0: exited\n  interrupted after point 2 of 3");
  EXPECT_EQ(broken.cases[1].name, "survival limit within one step of the arithmetic");
  EXPECT_EQ(broken.cases[1].verdict, Verdict::kFail);
  EXPECT_EQ(broken.cases[1].message, "limit 0.5 s, arithmetic 1.9 s");
  const JUnitSuite agrees = sweep_suite({"flaps", "", 3, 3, true, true, "within one step"}, run);
  EXPECT_EQ(agrees.cases[1].verdict, Verdict::kPass);
  EXPECT_EQ(agrees.cases[1].measured, "within one step");
}

}  // namespace
}  // namespace collide::orchestrator::report
