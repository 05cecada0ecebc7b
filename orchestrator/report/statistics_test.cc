#include "orchestrator/report/statistics.h"

#include <gtest/gtest.h>

#include "orchestrator/report/report.h"

namespace collide::orchestrator::report {
namespace {

// A repetition whose job is one all-reduce over two ranks taking `seconds`.
RunResult one_collective(const std::string& variant, uint32_t rep, double seconds) {
  RunResult r;
  r.variant = variant;
  r.repetition = rep;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    OpTiming op;
    op.rank = rank;
    op.kind = v1::OP_KIND_ALL_REDUCE;
    op.comm = "world";
    op.comm_size = 2;
    op.bytes = 1 << 20;
    op.start_ns = 1'000;
    op.end_ns = 1'000 + static_cast<uint64_t>(seconds * 1e9);
    r.ops.push_back(op);
  }
  return r;
}

TEST(StatisticsTest, StudentTQuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.95, 10), 1.812, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.960, 1e-3);
  EXPECT_EQ(student_t_quantile(0.975, 0), 0);
}

// Two JCTs of 1 s and 3 s: the plain mean's t-interval is 2 +- 12.7 s, below zero; the interval
// of the geometric mean (sqrt 3 s) is 1.73 x/ exp(12.706 x 0.549 / sqrt 2) and stays above it.
TEST(StatisticsTest, JctIntervalOfTwoRepetitionsStaysPositive) {
  const MeanInterval m = positive_mean_with_interval({1.0, 3.0});
  EXPECT_DOUBLE_EQ(m.mean, 2.0);
  EXPECT_NEAR(m.geomean, std::sqrt(3.0), 1e-12);
  EXPECT_GT(m.low, 0);
  EXPECT_LT(m.low, 1.0);
  EXPECT_GT(m.high, 3.0);
  EXPECT_NEAR(m.low * m.high, 3.0, 1e-9);  // symmetric on the log scale around the geometric mean
}

TEST(StatisticsTest, ReportedJctAndSlowdownIntervalsStayPositiveForTwoRepetitions) {
  const std::vector<RunResult> runs = {one_collective("baseline", 0, 0.2), one_collective("baseline", 1, 0.21),
                                       one_collective("slow", 0, 0.3), one_collective("slow", 1, 1.5)};
  const v1::Results r = to_results(build_report("unit", runs));
  ASSERT_EQ(r.variants_size(), 2);
  for (const v1::VariantResults& v : r.variants()) {
    ASSERT_EQ(v.jct_ci95_seconds_size(), 2) << v.name();
    EXPECT_GT(v.jct_ci95_seconds(0), 0) << v.name();
    EXPECT_LT(v.jct_ci95_seconds(0), v.jct_geomean_seconds()) << v.name();
    EXPECT_GT(v.jct_ci95_seconds(1), v.jct_geomean_seconds()) << v.name();
    ASSERT_EQ(v.slowdown_ci95_size(), 2) << v.name();
    EXPECT_GT(v.slowdown_ci95(0), 0) << v.name();
  }
  EXPECT_NEAR(r.variants(1).jct_geomean_seconds(), std::sqrt(0.3 * 1.5), 1e-6);
}

TEST(StatisticsTest, OneRepetitionHasAnIntervalOfItsValue) {
  const MeanInterval m = positive_mean_with_interval({0.5});
  EXPECT_DOUBLE_EQ(m.low, 0.5);
  EXPECT_DOUBLE_EQ(m.high, 0.5);
  EXPECT_DOUBLE_EQ(m.geomean, 0.5);
}

}  // namespace
}  // namespace collide::orchestrator::report
