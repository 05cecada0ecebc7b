#include "orchestrator/scenario/expectations_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "orchestrator/scenario/scenario.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator {
namespace {

// A scenario with a baseline and two variants, whose `expect:` list starts on line 21.
std::string scenario_with(const std::string& testbed_extra, int repetitions, const std::string& expect) {
  return R"(name: gates
testbed:
  virtual: {hosts: 2, leaves: 1, spines: 1)" + testbed_extra + R"(}
workload:
  collectives: {kind: all-reduce, bytes: 1MiB, count: 4}
faults:
  - {name: lossy, kind: loss, link: h1, probability: 1%}
  - {name: bursty, kind: burst-loss, link: h1, probability: 1%, mean_burst: 4}
  - {name: flap, kind: link-flap, link: h1, duration_ns: 100ms}
runs:
  baseline: true
  repetitions: )" + std::to_string(repetitions) + R"(
  variants:
    - name: loss
      faults: [lossy]
    - name: burst
      faults: [bursty, flap]
outputs:
  html: false
# expectations
expect:
)" + expect;
}

class ExpectationsCheckTest : public ::testing::Test {
 protected:
  Result<v1::Scenario> load(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() / ("collide-expect-" + std::to_string(getpid()) + ".yaml"))
                .string();
    std::ofstream(path_) << text;
    return load_scenario(path_);
  }
  // The error of a scenario whose expectations are `expect`, which must start with `path:line: field:`.
  void expect_refused(const std::string& expect, const std::string& where, const std::string& what,
                      int repetitions = 3, const std::string& testbed_extra = "") {
    auto s = load(scenario_with(testbed_extra, repetitions, expect));
    ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument)) << expect;
    const std::string& m = s.status().message();
    EXPECT_EQ(m.rfind(path_ + ":" + where, 0), 0u) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  std::string path_;
};

TEST_F(ExpectationsCheckTest, EveryKindOfCheckParsesWithItsUnits) {
  auto s = load(scenario_with(", host_link_gbps: 10", 3, R"(  - {name: loss is mild, variant: loss, slowdown_below: 2.5}
  - {variant: loss, slowdown_below: 3, of: mean}
  - {no_failed_runs: true}
  - {variant: baseline, no_failed_runs: true}
  - {variant: baseline, busbw_at_least: 80%, collective: all-reduce, bytes: 1MiB}
  - {variant: loss, busbw_at_least: 0.5, line_rate_gbps: 25}
  - {variant: baseline, jct_below_ns: 2s}
  - {variant: loss, p99_below_ns: 150ms, collective: all-reduce}
  - {fault_within_bound: lossy, confidence: 99%}
  - {fault_within_bound: lossy, variant: loss}
)"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->expect_size(), 10);
  EXPECT_EQ(s->expect(0).name(), "loss is mild");
  EXPECT_EQ(expectation_check(s->expect(0)), ExpectationCheck::kSlowdownBelow);
  EXPECT_DOUBLE_EQ(s->expect(0).slowdown_below(), 2.5);
  EXPECT_EQ(statistic_of(s->expect(0)), v1::Expectation::STATISTIC_UPPER);
  EXPECT_EQ(statistic_of(s->expect(1)), v1::Expectation::STATISTIC_MEAN);
  EXPECT_EQ(expectation_check(s->expect(2)), ExpectationCheck::kNoFailedRuns);
  EXPECT_DOUBLE_EQ(s->expect(4).busbw_at_least(), 0.8);
  EXPECT_EQ(s->expect(4).collective(), v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(s->expect(4).bytes(), 1048576u);
  EXPECT_EQ(line_rate_gbps(s->expect(4), *s), 10.0);   // the shaped host links
  EXPECT_EQ(line_rate_gbps(s->expect(5), *s), 25.0);   // its own
  EXPECT_EQ(s->expect(6).jct_below_ns(), 2'000'000'000u);
  EXPECT_EQ(s->expect(7).p99_below_ns(), 150'000'000u);
  EXPECT_DOUBLE_EQ(confidence_of(s->expect(8)), 0.99);
  EXPECT_DOUBLE_EQ(confidence_of(s->expect(9)), kDefaultFaultConfidence);
}

TEST_F(ExpectationsCheckTest, BadThresholdsAreRefusedAtTheirLine) {
  expect_refused("  - {variant: loss, slowdown_below: fast}\n", "22: expect[0].slowdown_below", "'fast' is not a number");
  expect_refused("  - {variant: loss, jct_below_ns: 2 parsecs}\n", "22: expect[0].jct_below_ns", "does not fit");
  expect_refused("  - {variant: loss, p99_below_ns: 1.5ns}\n", "22: expect[0].p99_below_ns", "not a whole number");
  expect_refused("  - {variant: loss, p99_below_ns: 0ms}\n", "22: expect[0].p99_below_ns", "positive duration");
  expect_refused("  - {variant: loss, slowdown_below: -1}\n", "22: expect[0].slowdown_below", "positive ratio");
  expect_refused("  - {no_failed_runs: maybe}\n", "22: expect[0].no_failed_runs", "not true or false");
  expect_refused("  - {no_failed_runs: false}\n", "22: expect[0].no_failed_runs", "no_failed_runs: true");
  expect_refused("  - {variant: loss, busbw_at_least: 80, line_rate_gbps: 10}\n", "22: expect[0].busbw_at_least",
                 "0%..100%");
  expect_refused("  - {variant: loss, busbw_at_least: 80%, line_rate_gbps: -1}\n", "22: expect[0].line_rate_gbps",
                 "positive");
  expect_refused("  - {variant: loss, busbw_at_least: 80%, collective: all-sum, line_rate_gbps: 1}\n",
                 "22: expect[0].collective", "'all-sum' is not one of");
  expect_refused("  - {fault_within_bound: lossy, confidence: 100%}\n", "22: expect[0].confidence", "within 0..1");
  expect_refused("  - {variant: loss, slowdown_below: 2, of: median}\n", "22: expect[0].of", "'median' is not one of");
  expect_refused("  - {variant: loss, slowdown_under: 2}\n", "22: expect[0].slowdown_under", "unknown field");
}

TEST_F(ExpectationsCheckTest, UnknownVariantsAndFaultsAreRefusedAtTheirLine) {
  expect_refused("  - {no_failed_runs: true}\n  - variant: los\n    slowdown_below: 2\n", "23: expect[1].variant",
                 "no variant 'los' runs in this scenario (runs: baseline, loss, burst)");
  expect_refused("  - fault_within_bound: lossless\n", "22: expect[0].fault_within_bound", "no fault named 'lossless'");
  expect_refused("  - {fault_within_bound: lossy, variant: burst}\n", "22: expect[0].variant",
                 "variant 'burst' does not run fault 'lossy'");
}

TEST_F(ExpectationsCheckTest, WhatACheckNeedsIsRefusedBeforeTheRun) {
  // No line rate: the host links are not shaped and none is given.
  expect_refused("  - {variant: loss, busbw_at_least: 80%}\n", "22: expect[0].busbw_at_least", "no line rate is known");
  // An interval needs two repetitions; the mean does not.
  expect_refused("  - {variant: loss, slowdown_below: 2}\n", "22: expect[0].slowdown_below", "runs.repetitions of 2",
                 1);
  expect_refused("  - {variant: loss, jct_below_ns: 1s}\n", "22: expect[0].jct_below_ns", "or write of: mean", 1);
  EXPECT_TRUE(load(scenario_with("", 1, "  - {variant: loss, slowdown_below: 2, of: mean}\n")).ok());
  expect_refused("  - {variant: baseline, slowdown_below: 2}\n", "22: expect[0].variant", "1 by definition");
  expect_refused("  - {slowdown_below: 2}\n", "22: expect[0].slowdown_below", "needs a variant");
  // Ground truth with no bound.
  expect_refused("  - {fault_within_bound: bursty}\n", "22: expect[0].fault_within_bound", "a burst-loss fault");
  expect_refused("  - {fault_within_bound: flap}\n", "22: expect[0].fault_within_bound", "a link-flap fault");
}

TEST_F(ExpectationsCheckTest, OneCheckPerExpectationAndQualifiersOnlyWhereTheyMeanSomething) {
  expect_refused("  - name: two\n    variant: loss\n    slowdown_below: 2\n    jct_below_ns: 1s\n",
                 "25: expect[0].jct_below_ns", "one check per expectation: this one also has slowdown_below");
  expect_refused("  - name: none\n    variant: loss\n", "22: expect[0].name", "names no check");
  expect_refused("  - {variant: loss, jct_below_ns: 1s, collective: all-gather}\n", "22: expect[0].collective",
                 "only for busbw_at_least and p99_below_ns");
  expect_refused("  - {no_failed_runs: true, of: mean}\n", "22: expect[0].of", "only for slowdown_below");
  expect_refused("  - {no_failed_runs: true, confidence: 99%}\n", "22: expect[0].confidence", "only for fault_within_bound");
  expect_refused("  - {variant: loss, p99_below_ns: 1s, line_rate_gbps: 10}\n", "22: expect[0].line_rate_gbps",
                 "only for busbw_at_least");
}

TEST_F(ExpectationsCheckTest, ARealTestbedHasNoShapedLinksSoBusbwNeedsALineRate) {
  v1::Scenario s;
  s.mutable_testbed()->add_agents()->set_address("10.0.0.1:7411");
  s.mutable_testbed()->mutable_virtual_()->set_host_link_gbps(10);  // ignored: not a virtual testbed
  v1::Expectation e;
  e.set_busbw_at_least(0.5);
  EXPECT_FALSE(line_rate_gbps(e, s).has_value());
  e.set_line_rate_gbps(100);
  EXPECT_EQ(line_rate_gbps(e, s), 100.0);
}

}  // namespace
}  // namespace collide::orchestrator
