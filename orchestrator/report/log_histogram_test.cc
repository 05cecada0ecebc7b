#include "orchestrator/report/log_histogram.h"

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "orchestrator/report/statistics.h"

namespace collide::orchestrator::report {
namespace {

TEST(LogHistogramTest, QuantilesStayWithinOnePercentOfExactOnesAtAnyScale) {
  for (double scale : {1e-6, 1.0, 3600.0}) {
    std::mt19937_64 draws(7);
    std::lognormal_distribution<double> times(0.0, 1.5);  // skewed, as completion times are
    LogHistogram h;
    std::vector<double> all;
    for (int i = 0; i < 20000; ++i) {
      const double v = times(draws) * scale;
      h.add(v);
      all.push_back(v);
    }
    for (double q : {0.01, 0.25, 0.5, 0.9, 0.99, 0.999}) {
      // The histogram gives the value of rank ceil(q n); the two neighbouring order statistics
      // bound what any definition of the quantile gives.
      const double exact = quantile(all, q);
      EXPECT_NEAR(h.quantile(q) / exact, 1.0, 0.011) << "q " << q << " scale " << scale;
    }
    EXPECT_EQ(h.quantile(0), quantile(all, 0));
    EXPECT_EQ(h.quantile(1), quantile(all, 1));
    EXPECT_EQ(h.count(), 20000u);
  }
}

TEST(LogHistogramTest, ItsSizeDependsOnTheRangeOfValuesNotOnHowManyThereAre) {
  LogHistogram h;
  std::mt19937_64 draws(1);
  std::uniform_real_distribution<double> seconds(1.0, 2.0);
  for (int i = 0; i < 1'000'000; ++i) h.add(seconds(draws));
  const size_t after_a_million = h.buckets();
  // 1..2 spans log(2)/log(1.02) = 35 bucket widths: 36 buckets at most.
  EXPECT_LE(after_a_million, 36u);
  for (int i = 0; i < 1'000'000; ++i) h.add(seconds(draws));
  EXPECT_EQ(h.buckets(), after_a_million);
  EXPECT_EQ(h.count(), 2'000'000u);
}

TEST(LogHistogramTest, MergingIsAddingTheValuesOfBoth) {
  LogHistogram a, b, both;
  for (int i = 1; i <= 100; ++i) {
    (i % 3 == 0 ? a : b).add(i * 0.5);
    both.add(i * 0.5);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), both.count());
  EXPECT_DOUBLE_EQ(a.sum(), both.sum());
  EXPECT_EQ(a.min(), 0.5);
  EXPECT_EQ(a.max(), 50.0);
  for (double q : {0.1, 0.5, 0.99}) EXPECT_EQ(a.quantile(q), both.quantile(q));
  LogHistogram empty;
  EXPECT_EQ(empty.quantile(0.5), 0);
  EXPECT_EQ(empty.mean(), 0);
  empty.merge(a);
  EXPECT_EQ(empty.quantile(0.5), a.quantile(0.5));
}

TEST(LogHistogramTest, ZeroAndTinyValuesShareTheLowestBucketAndNanIsIgnored) {
  LogHistogram h;
  h.add(0);
  h.add(1e-15);
  h.add(std::nan(""));
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.buckets(), 1u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_LE(h.quantile(0.5), 1e-15);
}

}  // namespace
}  // namespace collide::orchestrator::report
