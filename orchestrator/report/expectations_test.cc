#include "orchestrator/report/expectations.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::report {
namespace {

// A baseline and a lossy variant, 3 repetitions each, host links shaped to 10 Gbit/s.
v1::Scenario scenario() {
  v1::Scenario s;
  s.set_name("gates");
  s.mutable_testbed()->mutable_virtual_()->set_host_link_gbps(10);
  v1::Fault& loss = *s.add_faults();
  loss.set_name("lossy");
  loss.set_kind(v1::Fault::KIND_LOSS);
  loss.set_probability(0.01);
  v1::Fault& hole = *s.add_faults();
  hole.set_name("hole");
  hole.set_kind(v1::Fault::KIND_BLACKHOLE);
  s.mutable_runs()->set_baseline(true);
  s.mutable_runs()->set_repetitions(3);
  v1::Variant& v = *s.mutable_runs()->add_variants();
  v.set_name("loss");
  v.add_faults("lossy");
  v.add_faults("hole");
  return s;
}

v1::VariantResults& add_variant(v1::Results& r, const std::string& name, std::vector<double> jct) {
  v1::VariantResults& v = *r.add_variants();
  v.set_name(name);
  v.set_runs(static_cast<uint32_t>(jct.size()));
  double sum = 0;
  for (double j : jct) {
    v.add_jct_seconds(j);
    sum += j;
  }
  v.set_jct_mean_seconds(sum / static_cast<double>(jct.size()));
  return v;
}

v1::SizeRow& add_row(v1::VariantResults& v, const std::string& kind, uint64_t bytes, double busbw, double p99_us) {
  v1::SizeRow& row = *v.add_sizes();
  row.set_kind(kind);
  row.set_size_bytes(bytes);
  row.set_count(12);
  row.set_busbw_gbps(busbw);
  row.set_time_p99_us(p99_us);
  return row;
}

// Baseline JCT 1 s; the lossy variant 1.5 s mean, slowdown 1.5 (95% CI 1.2..1.8); 100000 packets
// matched by the 1% loss, 1010 dropped; the blackhole dropped all 500 it matched.
v1::Results results() {
  v1::Results r;
  r.set_scenario("gates");
  v1::VariantResults& base = add_variant(r, "baseline", {0.9, 1.0, 1.1});
  base.add_jct_ci95_seconds(0.75);
  base.add_jct_ci95_seconds(1.25);
  base.set_slowdown_mean(1);
  base.add_slowdown_ci95(0.75);
  base.add_slowdown_ci95(1.25);
  base.mutable_collective_time_us()->set_p99(900);
  base.mutable_collective_time_us()->set_count(36);
  add_row(base, "all_reduce", 1048576, 1.0, 800);    // 8 Gbit/s: 80% of 10
  add_row(base, "all_reduce", 4194304, 1.1, 900);
  add_row(base, "all_gather", 1048576, 0.5, 400);    // 40%
  v1::VariantResults& loss = add_variant(r, "loss", {1.4, 1.5, 1.6});
  loss.add_jct_ci95_seconds(1.2);
  loss.add_jct_ci95_seconds(1.8);
  loss.set_slowdown_mean(1.5);
  loss.add_slowdown_ci95(1.2);
  loss.add_slowdown_ci95(1.8);
  loss.mutable_collective_time_us()->set_p99(30000);
  loss.mutable_collective_time_us()->set_count(36);
  add_row(loss, "all_reduce", 1048576, 0.6, 30000);
  v1::FaultTruth& truth = *loss.add_faults();
  truth.set_name("lossy");
  truth.set_kind("loss");
  truth.set_packets_matched(100000);
  truth.set_packets_acted(1010);
  v1::FaultTruth& hole = *loss.add_faults();
  hole.set_name("hole");
  hole.set_kind("blackhole");
  hole.set_packets_matched(500);
  hole.set_packets_acted(500);
  return r;
}

ExpectationOutcome judge(const v1::Scenario& s, const v1::Results& r) {
  const auto out = evaluate_expectations(s, r);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? ExpectationOutcome{} : out[0];
}

ExpectationOutcome judge(v1::Expectation e, const v1::Results& r = results()) {
  v1::Scenario s = scenario();
  *s.add_expect() = std::move(e);
  return judge(s, r);
}

v1::Expectation slowdown(double below, bool mean = false) {
  v1::Expectation e;
  e.set_variant("loss");
  e.set_slowdown_below(below);
  if (mean) e.set_of(v1::Expectation::STATISTIC_MEAN);
  return e;
}

TEST(ExpectationsTest, SlowdownChecksTheUpperEndOfItsIntervalUnlessAskedForTheMean) {
  auto upper = judge(slowdown(1.7));  // mean 1.5 is below, the interval's 1.8 is not
  EXPECT_EQ(upper.verdict, Verdict::kFail);
  EXPECT_EQ(upper.name, "loss: slowdown < 1.7x (upper end of the 95% CI)");
  EXPECT_NE(upper.measured.find("1.8x (mean 1.5, 95% CI 1.2..1.8, 3 repetitions)"), std::string::npos)
      << upper.measured;
  EXPECT_NE(upper.message.find("1.8x is not below 1.7x"), std::string::npos);
  EXPECT_EQ(judge(slowdown(1.7, true)).verdict, Verdict::kPass);
  EXPECT_EQ(judge(slowdown(1.9)).verdict, Verdict::kPass);
  EXPECT_EQ(judge(slowdown(1.5, true)).verdict, Verdict::kFail);  // below, not equal
}

TEST(ExpectationsTest, TheGivenNameIsKept) {
  v1::Expectation e = slowdown(2);
  e.set_name("loss costs at most 2x");
  EXPECT_EQ(judge(e).name, "loss costs at most 2x");
}

TEST(ExpectationsTest, AnIntervalOverOneCompletedRepetitionIsAnErrorNotAPass) {
  v1::Results r = results();
  v1::VariantResults& loss = *r.mutable_variants(1);
  loss.clear_jct_seconds();
  loss.add_jct_seconds(1.5);
  loss.set_failed_runs(2);
  auto o = judge(slowdown(5), r);
  EXPECT_EQ(o.verdict, Verdict::kError);
  EXPECT_NE(o.message.find("needs 2 completed repetitions, 1 completed"), std::string::npos) << o.message;
}

TEST(ExpectationsTest, AVariantWhoseRunsAllFailedFailsAndOneThatNeverRanIsAnError) {
  v1::Results r = results();
  r.mutable_variants(1)->clear_jct_seconds();
  r.mutable_variants(1)->set_failed_runs(3);
  auto failed = judge(slowdown(5), r);
  EXPECT_EQ(failed.verdict, Verdict::kFail);
  EXPECT_NE(failed.message.find("no repetition of 'loss' completed (3 of 3 failed)"), std::string::npos);
  r.mutable_variants()->RemoveLast();
  auto missing = judge(slowdown(5), r);
  EXPECT_EQ(missing.verdict, Verdict::kError);
  EXPECT_NE(missing.message.find("'loss' has no results"), std::string::npos);
}

TEST(ExpectationsTest, JctAgainstADuration) {
  v1::Expectation e;
  e.set_variant("baseline");
  e.set_jct_below_ns(1'200'000'000);  // the interval's upper end is 1.25 s
  auto o = judge(e);
  EXPECT_EQ(o.verdict, Verdict::kFail);
  EXPECT_EQ(o.name, "baseline: JCT < 1.2 s (upper end of the 95% CI)");
  EXPECT_NE(o.message.find("JCT 1.25 s is not below 1.2 s"), std::string::npos) << o.message;
  EXPECT_EQ(o.measured, "1.25 s (mean 1 s, 95% CI 0.75..1.25 s, 3 repetitions)");
  e.set_of(v1::Expectation::STATISTIC_MEAN);
  EXPECT_EQ(judge(e).verdict, Verdict::kPass);  // mean 1 s
}

TEST(ExpectationsTest, P99OverAllCollectivesOrTheSizesNamed) {
  v1::Expectation e;
  e.set_variant("baseline");
  e.set_p99_below_ns(850'000);  // 850 us
  auto all = judge(e);
  EXPECT_EQ(all.verdict, Verdict::kFail);  // 900 us over all
  EXPECT_NE(all.measured.find("900 us (over 36 collectives)"), std::string::npos) << all.measured;
  e.set_collective(v1::OP_KIND_ALL_REDUCE);
  e.set_bytes(1048576);
  auto one = judge(e);
  EXPECT_EQ(one.verdict, Verdict::kPass) << one.measured;  // 800 us for that size
  EXPECT_EQ(one.name, "baseline: p99 collective time < 850 us for all_reduce of 1048576 B");
  e.set_bytes(2048);
  auto none = judge(e);
  EXPECT_EQ(none.verdict, Verdict::kError);
  EXPECT_NE(none.message.find("measured no collective for all_reduce of 2048 B (it measured: all_reduce of 1048576 B"),
            std::string::npos)
      << none.message;
}

TEST(ExpectationsTest, BusbwAsAShareOfLineRateTheSlowestMatchingSizeDecides) {
  v1::Expectation e;
  e.set_variant("baseline");
  e.set_busbw_at_least(0.8);
  e.set_collective(v1::OP_KIND_ALL_REDUCE);
  auto reduce = judge(e);  // 1.0 and 1.1 GB/s: 80% and 88% of 10 Gbit/s
  EXPECT_EQ(reduce.verdict, Verdict::kPass) << reduce.measured;
  EXPECT_NE(reduce.measured.find("80.0% (1 GB/s busbw, all_reduce of 1048576 B, line rate 10 Gbit/s)"),
            std::string::npos)
      << reduce.measured;
  e.clear_collective();  // the all-gather's 0.5 GB/s is 40%
  auto every = judge(e);
  EXPECT_EQ(every.verdict, Verdict::kFail);
  EXPECT_NE(every.message.find("busbw 40.0% of line rate is below 80%"), std::string::npos) << every.message;
  e.set_line_rate_gbps(4);  // its own line rate: 0.5 GB/s is 100% of 4 Gbit/s
  EXPECT_EQ(judge(e).verdict, Verdict::kPass);
}

TEST(ExpectationsTest, NoFailedRunsPerVariantOrEveryVariant) {
  v1::Results r = results();
  r.mutable_variants(1)->set_failed_runs(1);
  r.mutable_variants(1)->add_failures("repetition 2: rank 3 timed out");
  v1::Expectation e;
  e.set_no_failed_runs(true);
  auto every = judge(e, r);
  EXPECT_EQ(every.verdict, Verdict::kFail);
  EXPECT_EQ(every.name, "every variant: no failed runs");
  EXPECT_EQ(every.measured, "1 of 6 runs failed");
  EXPECT_NE(every.message.find("loss repetition 2: rank 3 timed out"), std::string::npos) << every.message;
  e.set_variant("baseline");
  auto base = judge(e, r);
  EXPECT_EQ(base.verdict, Verdict::kPass);
  EXPECT_EQ(base.measured, "0 of 3 runs failed");
}

v1::Expectation within_bound(const std::string& fault) {
  v1::Expectation e;
  e.set_fault_within_bound(fault);
  return e;
}

v1::Results with_loss_truth(uint64_t matched, uint64_t acted) {
  v1::Results r = results();
  r.mutable_variants(1)->mutable_faults(0)->set_packets_matched(matched);
  r.mutable_variants(1)->mutable_faults(0)->set_packets_acted(acted);
  return r;
}

TEST(ExpectationsTest, LossDropsWithinTheBinomialBoundOfItsProbability) {
  // 100000 packets at 1%: 1000 expected, standard deviation 31.5; 99.9% is about +-3.3 of them.
  auto ok = judge(within_bound("lossy"));
  EXPECT_EQ(ok.verdict, Verdict::kPass) << ok.measured;
  EXPECT_EQ(ok.name, "lossy: packets acted on within the fault's 99.9% bound");
  EXPECT_NE(ok.measured.find("loss: 1010 of 100000 matched (1.01%); 99.9% interval at 1%:"), std::string::npos)
      << ok.measured;
  EXPECT_EQ(judge(within_bound("lossy"), with_loss_truth(100000, 1100)).verdict, Verdict::kPass);
  auto high = judge(within_bound("lossy"), with_loss_truth(100000, 1120));
  EXPECT_EQ(high.verdict, Verdict::kFail) << high.measured;
  EXPECT_EQ(judge(within_bound("lossy"), with_loss_truth(100000, 890)).verdict, Verdict::kFail);
  EXPECT_EQ(judge(within_bound("lossy"), with_loss_truth(100000, 900)).verdict, Verdict::kPass);
  // A narrower confidence draws a narrower interval.
  v1::Expectation narrow = within_bound("lossy");
  narrow.set_confidence(0.9);
  EXPECT_EQ(judge(narrow, with_loss_truth(100000, 1100)).verdict, Verdict::kFail);
  auto none = judge(within_bound("lossy"), with_loss_truth(0, 0));
  EXPECT_EQ(none.verdict, Verdict::kFail);
  EXPECT_EQ(none.message, "the fault saw no packet");
}

TEST(ExpectationsTest, TheBoundHoldsAtTheEdgesOfProbability) {
  v1::Scenario s = scenario();
  *s.add_expect() = within_bound("lossy");
  s.mutable_faults(0)->set_probability(1);  // everything: exactly the packets matched
  EXPECT_EQ(judge(s, with_loss_truth(500, 500)).verdict, Verdict::kPass);
  EXPECT_EQ(judge(s, with_loss_truth(500, 499)).verdict, Verdict::kFail);
  s.mutable_faults(0)->set_probability(1e-6);  // one in a million: a handful at most
  EXPECT_EQ(judge(s, with_loss_truth(1'000'000, 0)).verdict, Verdict::kPass);
  EXPECT_EQ(judge(s, with_loss_truth(1'000'000, 3)).verdict, Verdict::kPass);
  EXPECT_EQ(judge(s, with_loss_truth(1'000'000, 40)).verdict, Verdict::kFail);
}

TEST(ExpectationsTest, ABlackholeDropsEverythingItMatches) {
  EXPECT_EQ(judge(within_bound("hole")).verdict, Verdict::kPass);
  v1::Results r = results();
  r.mutable_variants(1)->mutable_faults(1)->set_packets_acted(499);
  auto leak = judge(within_bound("hole"), r);
  EXPECT_EQ(leak.verdict, Verdict::kFail);
  EXPECT_NE(leak.message.find("untouched: 1"), std::string::npos) << leak.message;
  r.mutable_variants(1)->mutable_faults()->RemoveLast();
  EXPECT_EQ(judge(within_bound("hole"), r).verdict, Verdict::kError);  // no ground truth
}

TEST(ExpectationsTest, ARunThatFailedLeavesEveryExpectationInError) {
  v1::Scenario s = scenario();
  *s.add_expect() = slowdown(2);
  *s.add_expect() = within_bound("lossy");
  const auto out = unevaluated_expectations(s, "agent h1 went away");
  ASSERT_EQ(out.size(), 2u);
  for (const ExpectationOutcome& o : out) {
    EXPECT_EQ(o.verdict, Verdict::kError);
    EXPECT_EQ(o.message, "not evaluated: the run failed: agent h1 went away");
  }
  EXPECT_FALSE(all_hold(out));
  EXPECT_TRUE(all_hold({}));
}

TEST(ExpectationsTest, TheSummaryCountsAndShowsEachVerdictWithItsValue) {
  v1::Scenario s = scenario();
  *s.add_expect() = slowdown(2);
  *s.add_expect() = slowdown(1.7);
  const std::string text = expectations_summary(evaluate_expectations(s, results()));
  EXPECT_NE(text.find("expectations: 1 of 2 hold"), std::string::npos) << text;
  EXPECT_NE(text.find("PASS   loss: slowdown < 2x"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL   loss: slowdown < 1.7x"), std::string::npos) << text;
  EXPECT_NE(text.find("measured: 1.8x"), std::string::npos) << text;
  EXPECT_EQ(expectations_summary({}), "");
}

}  // namespace
}  // namespace collide::orchestrator::report
