#include "replayer/transport/dcqcn.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

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

TEST(DcqcnTest, ScaledToASlowLinkKeepsTheDynamicsInUnitsOfLineRate) {
  const DcqcnConfig slow = scaled_to_line_rate(enabled(), 0.25);  // 400x slower than 100 Gb/s
  EXPECT_DOUBLE_EQ(slow.line_rate_gbps, 0.25);
  EXPECT_EQ(slow.cnp_interval_ns, 20'000'000u);
  EXPECT_EQ(slow.alpha_update_ns, 22'000'000u);
  EXPECT_EQ(slow.rate_increase_ns, 24'000'000u);
  EXPECT_DOUBLE_EQ(slow.additive_increase_gbps, 0.0001);
  EXPECT_DOUBLE_EQ(slow.hyper_increase_gbps, 0.0005);
  EXPECT_DOUBLE_EQ(slow.min_rate_gbps, 0.00025);
  EXPECT_EQ(slow.byte_counter_bytes, 300'000u);
  EXPECT_TRUE(validate(slow).ok());
  // The QP starts at the link's rate, and a cut is the same fraction of it.
  Dcqcn d(slow, 0);
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 0.25);
  d.on_cnp(0);
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 0.125);
  // A 100 Gb/s timer period later nothing has climbed back yet: the next CNP finds the cut rate.
  d.on_time(60'000);
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 0.125);
  d.on_time(24'000'000);  // one stretched timer step: fast recovery halves the gap
  EXPECT_DOUBLE_EQ(d.rate_gbps(), 0.1875);
}

TEST(DcqcnTest, ScaledToTheReferenceRateIsUnchanged) {
  const DcqcnConfig same = scaled_to_line_rate(enabled(), kDcqcnReferenceGbps);
  const DcqcnConfig d = enabled();
  EXPECT_EQ(same.cnp_interval_ns, d.cnp_interval_ns);
  EXPECT_EQ(same.rate_increase_ns, d.rate_increase_ns);
  EXPECT_DOUBLE_EQ(same.additive_increase_gbps, d.additive_increase_gbps);
}

TEST(DcqcnTest, ValidatesConfig) {
  DcqcnConfig c = enabled();
  EXPECT_TRUE(validate(c).ok());
  c.min_rate_gbps = 200;
  EXPECT_THAT(validate(c), StatusIs(StatusCode::kInvalidArgument));
  c = enabled();
  c.cnp_interval_ns = 0;
  EXPECT_THAT(validate(c), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::replayer::transport
