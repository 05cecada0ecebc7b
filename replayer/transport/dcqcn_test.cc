#include "replayer/transport/dcqcn.h"

#include <gtest/gtest.h>

namespace collide::replayer::transport {
namespace {

DcqcnConfig enabled() {
  DcqcnConfig c;
  c.enabled = true;
  return c;
}

TEST(DcqcnTest, FirstCnpHalvesTheRate) {
  Dcqcn d(enabled(), 0);
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 100.0);
  d.on_cnp(1000);
  // alpha starts at 1: the first cut is to half the rate, the target stays at the old rate.
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 50.0);
  EXPECT_DOUBLE_EQ(d.target_gbps(), 100.0);
  EXPECT_DOUBLE_EQ(d.alpha(), 1.0);  // (1-g)*1 + g
}

TEST(DcqcnTest, RepeatedCnpsDriveTheRateDownToTheFloor) {
  Dcqcn d(enabled(), 0);
  for (int i = 0; i < 40; ++i) d.on_cnp(static_cast<Nanos>(i) * 10'000);
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 0.1);
}

TEST(DcqcnTest, FastRecoveryHalvesTheGapEachTimerStep) {
  Dcqcn d(enabled(), 0);
  d.on_cnp(0);
  d.on_time(60'000);  // one rate-timer step
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 75.0);
  d.on_time(120'000);
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 87.5);
}

TEST(DcqcnTest, AlphaDecaysWithoutCnps) {
  Dcqcn d(enabled(), 0);
  d.on_cnp(0);
  const double a0 = d.alpha();
  d.on_time(55'000);   // period with the CNP: no decay
  d.on_time(110'000);  // period without: decays by (1 - g)
  EXPECT_NEAR(d.alpha(), a0 * (1 - 1.0 / 256), 1e-12);
}

TEST(DcqcnTest, RecoversToLineRateAndByteCounterCounts) {
  Dcqcn d(enabled(), 0);
  d.on_cnp(0);
  d.on_bytes_sent(300'000, 1);  // one byte-counter step
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 75.0);
  d.on_time(100'000'000);  // 100 ms of timer steps: back at line rate
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 100.0);
}

TEST(DcqcnTest, ValidatesConfig) {
  DcqcnConfig c = enabled();
  EXPECT_TRUE(validate(c).ok());
  c.min_rate_gbps = 200;
  EXPECT_FALSE(validate(c).ok());
}

}  // namespace
}  // namespace collide::replayer::transport
