#include "orchestrator/report/flap_survival.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "orchestrator/report/survival_html.h"

namespace collide::orchestrator::report {
namespace {

using ::testing::HasSubstr;

TEST(RetryArithmeticTest, MatchesHandNumbers) {
  v1::TransportSettings t;
  t.set_timeout_exponent(12);
  t.set_retry_count(2);
  auto a = retry_arithmetic(t);
  ASSERT_TRUE(a.ok()) << a.status().message();
  // 4.096 us x 4096 = 16.777216 ms; 3 attempts.
  EXPECT_DOUBLE_EQ(a->timeout_ms, 16.777216);
  EXPECT_EQ(a->attempts, 3u);
  EXPECT_DOUBLE_EQ(a->limit_ms, 50.331648);
  EXPECT_DOUBLE_EQ(a->last_resend_ms, 33.554432);
}

TEST(RetryArithmeticTest, UnsetFieldsTakeTheTransportsDefaults) {
  auto a = retry_arithmetic(v1::TransportSettings{});
  ASSERT_TRUE(a.ok()) << a.status().message();
  // Exponent 14, scale 1, 7 retries: 67.108864 ms x 8.
  EXPECT_EQ(a->timeout_exponent, 14u);
  EXPECT_EQ(a->retry_count, 7u);
  EXPECT_DOUBLE_EQ(a->timeout_ms, 67.108864);
  EXPECT_DOUBLE_EQ(a->limit_ms, 536.870912);
}

TEST(RetryArithmeticTest, TheTimeoutScaleMultipliesEachWait) {
  v1::TransportSettings t;
  t.set_timeout_exponent(10);
  t.set_timeout_scale(0.5);
  t.set_retry_count(3);
  auto a = retry_arithmetic(t);
  ASSERT_TRUE(a.ok()) << a.status().message();
  // 4.096 us x 1024 x 0.5 = 2.097152 ms; 4 attempts.
  EXPECT_DOUBLE_EQ(a->timeout_ms, 2.097152);
  EXPECT_DOUBLE_EQ(a->limit_ms, 8.388608);
}

TEST(RetryArithmeticTest, RefusesWhatTheTransportRefuses) {
  v1::TransportSettings t;
  t.set_retry_count(8);
  auto a = retry_arithmetic(t);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("retry_count"));
}

// A loss fault first (so the flap is faults[1]) and a flap variant with its own transport:
// 16.777 ms per attempt, 3 attempts, limit 50.33 ms.
v1::Scenario flap_scenario() {
  v1::Scenario s;
  s.set_name("flap-survival");
  s.mutable_transport()->set_timeout_exponent(14);
  v1::Fault& loss = *s.add_faults();
  loss.set_name("lossy");
  loss.set_kind(v1::Fault::KIND_LOSS);
  v1::Fault& flap = *s.add_faults();
  flap.set_name("flap");
  flap.set_kind(v1::Fault::KIND_LINK_FLAP);
  s.mutable_runs()->set_baseline(true);
  v1::Variant& v = *s.mutable_runs()->add_variants();
  v.set_name("flapped");
  v.add_faults("flap");
  v.mutable_transport()->set_timeout_exponent(12);
  v.mutable_transport()->set_retry_count(2);
  return s;
}

const char* kDied =
    "1 of 2 run(s) failed:\n  flapped (repetition 1): h1: NET/IB: rank 1 got completion from rank 0 "
    "(10.9.0.1) with error 12 (IBV_WC_RETRY_EXC_ERR) on QP 0x1c2: transport retry counter exceeded: no "
    "progress at PSN 77 after 2 retries of 16777 us; h0: stopped: h1 failed; ";

// Points at `ms` durations (given out of order); those in `died` failed as kDied says.
v1::SweepResults flap_sweep(const std::vector<int>& durations_ms, const std::vector<int>& died) {
  v1::SweepResults sweep;
  sweep.add_fields("faults[1].duration_ns");
  for (int d : durations_ms) {
    v1::SweepPointResults& p = *sweep.add_points();
    v1::SweepSetting& s = *p.add_settings();
    s.set_field("faults[1].duration_ns");
    s.set_text(std::to_string(d) + "ms");
    s.set_value(d * 1e6);
    const bool dies = std::find(died.begin(), died.end(), d) != died.end();
    for (const char* name : {"baseline", "flapped"}) {
      v1::SweepVariantPoint& v = *p.add_variants();
      v.set_name(name);
      v.set_runs(1);
      v.set_failed_runs(dies && std::string(name) == "flapped" ? 1 : 0);
    }
    if (dies) p.set_failure(kDied);
  }
  return sweep;
}

TEST(FlapSurvivalTest, FindsTheLimitNamesTheDeadQpAndJudgesItAgainstTheArithmetic) {
  auto s = flap_survival(flap_scenario(), flap_sweep({70, 10, 50, 30}, {50, 70}));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->field(), "faults[1].duration_ns");
  EXPECT_EQ(s->fault(), "flap");
  EXPECT_EQ(s->variant(), "flapped");
  EXPECT_EQ(s->timeout_exponent(), 12u);  // the variant's over the scenario's
  EXPECT_DOUBLE_EQ(s->limit_ms(), 50.331648);
  ASSERT_EQ(s->points_size(), 4);
  EXPECT_EQ(s->points(0).text(), "10ms");
  EXPECT_TRUE(s->points(0).survived());
  EXPECT_TRUE(s->points(1).survived());
  const v1::SurvivalPoint& died = s->points(2);
  EXPECT_FALSE(died.survived());
  EXPECT_DOUBLE_EQ(died.duration_ms(), 50);
  EXPECT_EQ(died.host(), "h1");
  EXPECT_EQ(died.rank(), 1);
  EXPECT_EQ(died.peer_rank(), 0);
  EXPECT_EQ(died.qp(), "0x1c2");
  EXPECT_THAT(died.failure(), HasSubstr("IBV_WC_RETRY_EXC_ERR"));
  EXPECT_THAT(died.failure(), ::testing::Not(HasSubstr("stopped")));
  EXPECT_DOUBLE_EQ(s->longest_survived_ms(), 30);
  EXPECT_DOUBLE_EQ(s->shortest_fatal_ms(), 50);
  EXPECT_DOUBLE_EQ(s->step_ms(), 20);
  EXPECT_TRUE(s->within_one_step()) << s->verdict();
  EXPECT_THAT(survival_text(*s), HasSubstr("QP 0x1c2"));
  v1::SweepResults with = flap_sweep({10}, {});
  *with.mutable_survival() = *s;
  EXPECT_THAT(survival_html(with), HasSubstr("0x1c2"));
  EXPECT_THAT(survival_html(with), HasSubstr("Within one step"));
}

TEST(FlapSurvivalTest, ALimitMoreThanAStepFromTheArithmeticIsNotWithinOneStep) {
  // Survived up to 90 ms, died at 110: 50.33 ms lies 39.7 ms below, more than the 20 ms step.
  auto s = flap_survival(flap_scenario(), flap_sweep({10, 30, 50, 70, 90, 110}, {110}));
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->within_one_step());
  EXPECT_THAT(s->verdict(), HasSubstr("more than one step"));
  // Survived up to 70 ms, died at 90: 50.33 ms lies 19.7 ms below, within the 20 ms step.
  auto near = flap_survival(flap_scenario(), flap_sweep({10, 30, 50, 70, 90}, {90}));
  ASSERT_TRUE(near.has_value());
  EXPECT_TRUE(near->within_one_step()) << near->verdict();
}

TEST(FlapSurvivalTest, ASweepThatDoesNotBracketTheLimitSaysSo) {
  auto all_lived = flap_survival(flap_scenario(), flap_sweep({10, 30}, {}));
  ASSERT_TRUE(all_lived.has_value());
  EXPECT_FALSE(all_lived->within_one_step());
  EXPECT_THAT(all_lived->verdict(), HasSubstr("no duration was fatal"));
  auto all_died = flap_survival(flap_scenario(), flap_sweep({60, 80}, {60, 80}));
  ASSERT_TRUE(all_died.has_value());
  EXPECT_FALSE(all_died->within_one_step());
  EXPECT_THAT(all_died->verdict(), HasSubstr("no duration was survived"));
}

TEST(FlapSurvivalTest, OnlyAFlapsOrABlackholesDurationMakesASurvivalSweep) {
  v1::SweepResults loss = flap_sweep({10, 30}, {});
  loss.set_fields(0, "faults[0].duration_ns");  // the loss fault's window, not a flap
  EXPECT_FALSE(flap_survival(flap_scenario(), loss).has_value());
  v1::SweepResults probability = flap_sweep({10, 30}, {});
  probability.set_fields(0, "faults[1].probability");
  EXPECT_FALSE(flap_survival(flap_scenario(), probability).has_value());
  v1::Scenario blackhole = flap_scenario();
  blackhole.mutable_faults(1)->set_kind(v1::Fault::KIND_BLACKHOLE);
  EXPECT_TRUE(flap_survival(blackhole, flap_sweep({10, 30}, {})).has_value());
  v1::Scenario unused = flap_scenario();
  unused.mutable_runs()->mutable_variants(0)->clear_faults();
  EXPECT_FALSE(flap_survival(unused, flap_sweep({10, 30}, {})).has_value());
}

TEST(FlapSurvivalTest, OnlyTheFlapsVariantDyingOfRetriesIsTheMeasurement) {
  EXPECT_TRUE(died_as_measured(kDied, "flapped"));
  EXPECT_FALSE(died_as_measured(kDied, "other"));
  EXPECT_FALSE(died_as_measured("2 of 2 run(s) failed:\n  baseline (repetition 1): h0: replay exited 1; \n" +
                                    std::string(kDied).substr(std::string(kDied).find('\n') + 1),
                                "flapped"));
  EXPECT_FALSE(died_as_measured("1 of 2 run(s) failed:\n  flapped (repetition 1): h0: the run did not end; ",
                                "flapped"));
  EXPECT_FALSE(died_as_measured(std::string(kDied) + "\nthe testbed was left behind", "flapped"));
  EXPECT_FALSE(died_as_measured("agent h1 failed: lost", "flapped"));
}

}  // namespace
}  // namespace collide::orchestrator::report
