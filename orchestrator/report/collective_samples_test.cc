#include "orchestrator/report/collective_samples.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::report {
namespace {

std::vector<CollectiveTime> all_reduces(int n, uint64_t bytes) {
  std::vector<CollectiveTime> out;
  for (int k = 0; k < n; ++k) {
    CollectiveTime c;
    c.kind = v1::OP_KIND_ALL_REDUCE;
    c.comm_size = 4;
    c.bytes = bytes;
    c.start_ns = 0;
    c.end_ns = static_cast<uint64_t>(1000 * (k + 1));  // k + 1 microseconds
    out.push_back(c);
  }
  return out;
}

TEST(CollectiveSamplesTest, KeepsEveryTimeUpToTheCap) {
  auto times = all_reduces(5, 1 << 20);
  times[2].failed = true;
  const auto rows = sample_collective_times(times, 0, 10);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].count, 4u);
  EXPECT_FALSE(rows[0].sampled);
  EXPECT_EQ(rows[0].times_us, (std::vector<double>{1, 2, 4, 5}));
}

TEST(CollectiveSamplesTest, SamplesBeyondTheCapUniformlyAndReproducibly) {
  const auto times = all_reduces(10'000, 1 << 20);
  const auto rows = sample_collective_times(times, 3, 100);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].count, 10'000u);
  EXPECT_TRUE(rows[0].sampled);
  ASSERT_EQ(rows[0].times_us.size(), 100u);
  // Uniform over 1..10000 us: the sample's mean near 5000 (its standard error is about 290).
  double sum = 0;
  for (double t : rows[0].times_us) sum += t;
  EXPECT_NEAR(sum / 100, 5000, 1200);
  // Not just the first 100.
  EXPECT_GT(*std::max_element(rows[0].times_us.begin(), rows[0].times_us.end()), 100);
  EXPECT_EQ(sample_collective_times(times, 3, 100)[0].times_us, rows[0].times_us);
  EXPECT_NE(sample_collective_times(times, 4, 100)[0].times_us, rows[0].times_us);
}

TEST(CollectiveSamplesTest, OneRowPerKindAndSize) {
  auto times = all_reduces(3, 1 << 20);
  for (const auto& c : all_reduces(2, 1 << 10)) times.push_back(c);
  const auto rows = sample_collective_times(times, 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bytes, 1u << 10);
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[1].count, 3u);
}

}  // namespace
}  // namespace collide::orchestrator::report
