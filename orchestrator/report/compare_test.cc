#include "orchestrator/report/compare.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "orchestrator/report/compare_output.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::report {
namespace {

namespace fs = std::filesystem;

// How a synthetic run's collective times are drawn: each repetition has its own machine factor
// (log-normal, `run_sigma`), each collective a log-normal spread around `median_us` times it.
struct RunShape {
  int repetitions = 5;
  int collectives = 200;
  double median_us = 100;
  double sigma = 0.3;       // within a repetition
  double run_sigma = 0.02;  // between repetitions
};

v1::Results synthetic_run(const RunShape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  v1::Results r;
  r.set_scenario("synthetic");
  v1::VariantResults& v = *r.add_variants();
  v.set_name("baseline");
  v.set_runs(static_cast<uint32_t>(shape.repetitions));
  for (int rep = 0; rep < shape.repetitions; ++rep) {
    const double machine = std::exp(shape.run_sigma * normal(rng));
    v1::RepetitionResult& rr = *v.add_repetitions();
    rr.set_repetition(static_cast<uint32_t>(rep));
    v1::CollectiveTimeSamples& s = *rr.add_collective_times();
    s.set_kind("all_reduce");
    s.set_size_bytes(1 << 20);
    s.set_type("bfloat16");
    s.set_redop("sum");
    s.set_count(static_cast<uint64_t>(shape.collectives));
    double total = 0;
    for (int k = 0; k < shape.collectives; ++k) {
      const double t = shape.median_us * machine * std::exp(shape.sigma * normal(rng));
      s.add_times_us(t);
      total += t;
    }
    rr.set_jct_seconds(total / 1e6);
  }
  return r;
}

const CompareRow& only_row(const Comparison& c) {
  EXPECT_EQ(c.variants.size(), 1u);
  EXPECT_EQ(c.variants.at(0).rows.size(), 1u);
  return c.variants.at(0).rows.at(0);
}

TEST(CompareTest, ClearlySlowerRunIsWorseAndFasterIsBetter) {
  RunShape slow;
  slow.median_us = 150;
  const v1::Results a = synthetic_run({}, 1), b = synthetic_run(slow, 2);
  const Comparison worse = compare_results(a, b, 0.95, "a", "b");
  const CompareRow& w = only_row(worse);
  EXPECT_EQ(w.p50.verdict, CompareVerdict::kWorse) << comparison_text(worse);
  EXPECT_GT(w.p50.low, 1);
  EXPECT_NEAR(w.p50.ratio, 1.5, 0.1);
  EXPECT_EQ(w.p99.verdict, CompareVerdict::kWorse);
  EXPECT_GT(w.p99.low, 1);
  EXPECT_EQ(worse.variants[0].jct.verdict, CompareVerdict::kWorse);
  EXPECT_EQ(w.repetitions_a, 5u);
  EXPECT_EQ(w.count_b, 1000u);

  const Comparison better = compare_results(b, a, 0.95, "b", "a");
  const CompareRow& bt = only_row(better);
  EXPECT_EQ(bt.p50.verdict, CompareVerdict::kBetter);
  EXPECT_LT(bt.p50.high, 1);
  EXPECT_EQ(bt.p99.verdict, CompareVerdict::kBetter);
  EXPECT_EQ(better.variants[0].jct.verdict, CompareVerdict::kBetter);
  EXPECT_NE(comparison_text(better).find("better"), std::string::npos);
}

// Twenty pairs of runs of one unchanged setup whose machine moves each repetition by ~10%: at the
// 95% level about one pair in twenty may be called different, not most of them (which is what
// pooling every collective of a run as independent would give, its interval being ~1% wide).
TEST(CompareTest, SameSetupUnderMachineNoiseShowsNoDifference) {
  RunShape noisy;
  noisy.run_sigma = 0.1;
  int no_difference = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Comparison c =
        compare_results(synthetic_run(noisy, 100 + seed), synthetic_run(noisy, 200 + seed), 0.95, "a", "b");
    const CompareRow& row = only_row(c);
    if (row.p50.verdict == CompareVerdict::kNoDifference) {
      ++no_difference;
      EXPECT_LE(row.p50.low, 1);
      EXPECT_GE(row.p50.high, 1);
    }
  }
  EXPECT_GE(no_difference, 17) << no_difference;
}

TEST(CompareTest, SameDistributionIsNoDetectableDifference) {
  const Comparison c = compare_results(synthetic_run({}, 7), synthetic_run({}, 8), 0.95, "a", "b");
  const CompareRow& row = only_row(c);
  EXPECT_EQ(row.p50.verdict, CompareVerdict::kNoDifference) << comparison_text(c);
  EXPECT_LT(row.p50.low, 1);
  EXPECT_GT(row.p50.high, 1);
  EXPECT_EQ(row.p99.verdict, CompareVerdict::kNoDifference) << comparison_text(c);
  EXPECT_EQ(c.variants[0].jct.verdict, CompareVerdict::kNoDifference) << comparison_text(c);
}

// The same collectives, but each repetition on a machine that is faster or slower as a whole:
// the interval of three repetitions per side widens with that run-level noise.
TEST(CompareTest, RunLevelShiftWithFewRepetitionsWidensTheInterval) {
  RunShape calm, shifting;
  calm.repetitions = shifting.repetitions = 3;
  calm.run_sigma = 0;
  shifting.run_sigma = 0.2;
  const CompareRow calm_row = only_row(compare_results(synthetic_run(calm, 11), synthetic_run(calm, 12), 0.95, "a", "b"));
  const CompareRow shifting_row =
      only_row(compare_results(synthetic_run(shifting, 11), synthetic_run(shifting, 12), 0.95, "a", "b"));
  const double calm_width = std::log(calm_row.p50.high / calm_row.p50.low);
  const double shifting_width = std::log(shifting_row.p50.high / shifting_row.p50.low);
  EXPECT_GT(shifting_width, 3 * calm_width);
  EXPECT_EQ(shifting_row.p50.verdict, CompareVerdict::kNoDifference);
}

TEST(CompareTest, IntervalsFollowTheLevel) {
  const v1::Results a = synthetic_run({}, 21), b = synthetic_run({}, 22);
  const CompareRow r90 = only_row(compare_results(a, b, 0.90, "a", "b"));
  const CompareRow r99 = only_row(compare_results(a, b, 0.99, "a", "b"));
  EXPECT_LT(r90.p50.high, r99.p50.high);
  EXPECT_GT(r90.p50.low, r99.p50.low);
  EXPECT_DOUBLE_EQ(r90.p50.ratio, r99.p50.ratio);
}

TEST(CompareTest, OneRepetitionPerSideGivesNoVerdict) {
  RunShape once;
  once.repetitions = 1;
  RunShape slow = once;
  slow.median_us = 300;
  const Comparison c = compare_results(synthetic_run(once, 1), synthetic_run(slow, 2), 0.95, "a", "b");
  EXPECT_EQ(only_row(c).p50.verdict, CompareVerdict::kTooFewRuns);
  EXPECT_NEAR(only_row(c).p50.ratio, 3, 0.3);
  EXPECT_NE(comparison_text(c).find("too few repetitions"), std::string::npos);
  // Two on one side and one on the other: a pooled variance, 1 degree of freedom.
  RunShape twice = once;
  twice.repetitions = 2;
  const Comparison d = compare_results(synthetic_run(twice, 1), synthetic_run(slow, 2), 0.95, "a", "b");
  EXPECT_EQ(only_row(d).p50.dof, 1);
  EXPECT_NE(only_row(d).p50.verdict, CompareVerdict::kTooFewRuns);
}

TEST(CompareTest, SideWithoutCompletedRepetitionsHasNoValue) {
  const v1::Results a = synthetic_run({}, 51);
  v1::Results b = synthetic_run({}, 52);
  for (v1::RepetitionResult& r : *b.mutable_variants(0)->mutable_repetitions()) r.set_failed(true);
  const Comparison c = compare_results(a, b, 0.95, "a", "b");
  EXPECT_EQ(c.variants[0].completed_b, 0u);
  EXPECT_EQ(c.variants[0].jct.verdict, CompareVerdict::kTooFewRuns);
  EXPECT_TRUE(c.variants[0].rows.empty());
  ASSERT_EQ(c.variants[0].rows_only_in_a.size(), 1u);
  const std::string text = comparison_text(c);
  EXPECT_NE(text.find("JCT"), std::string::npos);
  EXPECT_EQ(text.find("0.000"), std::string::npos) << text;
  EXPECT_NE(text.find("too few repetitions"), std::string::npos) << text;
}

// A run of a baseline and a "loss" variant, repetitions interleaved as `collide run` runs them:
// each repetition's machine (`load` times a 10% noise) slows both of its runs alike.
v1::Results paired_run(uint64_t seed, double load, double loss_factor) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  v1::Results r;
  v1::VariantResults& base = *r.add_variants();
  base.set_name("baseline");
  v1::VariantResults& loss = *r.add_variants();
  loss.set_name("loss");
  for (uint32_t rep = 0; rep < 4; ++rep) {
    const double machine = load * std::exp(0.1 * normal(rng));
    v1::RepetitionResult& b = *base.add_repetitions();
    b.set_repetition(rep);
    b.set_jct_seconds(machine * std::exp(0.02 * normal(rng)));
    v1::RepetitionResult& l = *loss.add_repetitions();
    l.set_repetition(rep);
    l.set_jct_seconds(loss_factor * machine * std::exp(0.02 * normal(rng)));
  }
  return r;
}

// Run B on a machine 40% busier throughout: its JCTs are longer, its slowdowns over its own
// baseline are not.
TEST(CompareTest, SlowdownOverItsOwnBaselineCancelsARunsLoad) {
  const Comparison same = compare_results(paired_run(61, 1.0, 1.5), paired_run(62, 1.4, 1.5), 0.95, "a", "b");
  ASSERT_EQ(same.variants.size(), 2u);
  EXPECT_FALSE(same.variants[0].has_slowdown);
  const VariantComparison& loss = same.variants[1];
  ASSERT_TRUE(loss.has_slowdown);
  EXPECT_EQ(loss.jct.verdict, CompareVerdict::kWorse) << comparison_text(same);
  EXPECT_EQ(loss.slowdown.verdict, CompareVerdict::kNoDifference) << comparison_text(same);
  EXPECT_NEAR(loss.slowdown.a, 1.5, 0.1);

  const Comparison worse = compare_results(paired_run(61, 1.0, 1.5), paired_run(62, 1.4, 2.0), 0.95, "a", "b");
  EXPECT_EQ(worse.variants[1].slowdown.verdict, CompareVerdict::kWorse) << comparison_text(worse);
  EXPECT_GT(worse.variants[1].slowdown.low, 1);
  EXPECT_NE(comparison_text(worse).find("JCT / its repetition's baseline JCT"), std::string::npos);
  EXPECT_TRUE(comparison_json(worse)["variants"][1].contains("slowdown_vs_baseline"));
}

TEST(CompareTest, SameInputsGiveTheSameOutput) {
  const v1::Results a = synthetic_run({}, 31), b = synthetic_run({}, 32);
  const Comparison c1 = compare_results(a, b, 0.95, "a", "b");
  const Comparison c2 = compare_results(a, b, 0.95, "a", "b");
  EXPECT_EQ(comparison_text(c1), comparison_text(c2));
  EXPECT_EQ(comparison_json(c1).dump(), comparison_json(c2).dump());
  EXPECT_EQ(comparison_html(c1, a, b), comparison_html(c2, a, b));
}

TEST(CompareTest, VariantsAndRowsOfOneRunOnlyAreListed) {
  v1::Results a = synthetic_run({}, 41), b = synthetic_run({}, 42);
  a.add_variants()->set_name("only-a");
  b.add_variants()->set_name("only-<b>");
  // A second size in B only.
  v1::CollectiveTimeSamples extra = b.variants(0).repetitions(0).collective_times(0);
  extra.set_size_bytes(4096);
  *b.mutable_variants(0)->mutable_repetitions(0)->add_collective_times() = extra;
  const Comparison c = compare_results(a, b, 0.95, "A.json", "B.json");
  ASSERT_EQ(c.variants.size(), 3u);
  EXPECT_EQ(c.variants[1].name, "only-a");
  EXPECT_TRUE(c.variants[1].in_a);
  EXPECT_FALSE(c.variants[1].in_b);
  EXPECT_FALSE(c.variants[2].in_a);
  ASSERT_EQ(c.variants[0].rows_only_in_b.size(), 1u);
  EXPECT_EQ(c.variants[0].rows_only_in_b[0].size_bytes, 4096u);
  const std::string text = comparison_text(c);
  EXPECT_NE(text.find("only-a: only in A"), std::string::npos) << text;
  EXPECT_NE(text.find("all_reduce 4096 B bfloat16 sum: only in B"), std::string::npos) << text;
  const std::string html = comparison_html(c, a, b);
  EXPECT_NE(html.find("only-&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("only-<b>"), std::string::npos);
  const nlohmann::json j = comparison_json(c);
  EXPECT_EQ(j["variants"][2]["in_a"], false);
  EXPECT_EQ(j["ratio"], "b / a");
}

class ReadResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collide-compare-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReadResultsTest, NamesTheFileThatIsMissingOrBad) {
  auto missing = read_results(dir_.string());
  ASSERT_THAT(missing, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(missing.status().message().find((dir_ / "report.json").string() + ": cannot read it"),
            std::string::npos)
      << missing.status().message();
  std::ofstream(dir_ / "report.json") << "{\"variants\": [{\"name\": \"baseline\", \"runs\": \"x\"}]}";
  auto bad = read_results(dir_.string());
  ASSERT_THAT(bad, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(bad.status().message().find("report.json: not a collide report.json"), std::string::npos)
      << bad.status().message();
  std::ofstream(dir_ / "empty.json") << "{}";
  auto empty = read_results((dir_ / "empty.json").string());
  ASSERT_THAT(empty, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(empty.status().message().find("empty.json: not a collide report.json: no variants"),
            std::string::npos);
}

TEST_F(ReadResultsTest, ReadsWhatCompareNeeds) {
  std::ofstream(dir_ / "report.json") << R"({"scenario": "s", "variants": [{"name": "baseline",
    "repetitions": [{"repetition": 0, "jct_seconds": 0.5, "collective_times": [{"kind": "all_reduce",
    "size_bytes": "1024", "count": "2", "times_us": [10, 12]}]}], "a_field_of_later_collide": 1}]})";
  auto r = read_results((dir_ / "report.json").string());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->variants(0).repetitions(0).collective_times(0).times_us_size(), 2);
}

}  // namespace
}  // namespace collide::orchestrator::report
