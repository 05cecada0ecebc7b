#include "replayer/engine/pacer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/support/status_matchers.h"

namespace collide::replayer::engine {
namespace {

using transport::Nanos;

constexpr uint32_t kFrame = 1000;
constexpr double kCost = kFrame + kEthernetLineOverhead;

TEST(PacerTest, OffLetsEverythingGo) {
  Pacer p;
  EXPECT_FALSE(p.enabled());
  for (int i = 0; i < 1000; ++i) p.on_sent(9000);
  EXPECT_TRUE(p.may_send());
  EXPECT_EQ(Pacer(PacerConfig{0, 4, kFrame}, 100).next_send_time(), 100u);
}

TEST(PacerTest, AnIdlePortSendsOneBurstThenWaitsAFrameTime) {
  Pacer p(PacerConfig{8, 4, kFrame}, 1000);  // 8 Gb/s: 1 byte per ns
  int sent = 0;
  while (p.may_send()) {
    p.on_sent(kFrame);
    ++sent;
  }
  EXPECT_EQ(sent, 4);
  // The next frame needs a whole frame's worth of tokens: 1024 ns at 1 B/ns.
  EXPECT_EQ(p.next_send_time(), 1000u + static_cast<Nanos>(kCost));
  p.advance(1000 + static_cast<Nanos>(kCost) - 1);
  EXPECT_FALSE(p.may_send());
  p.advance(p.next_send_time());
  EXPECT_TRUE(p.may_send());
}

TEST(PacerTest, IdleTimeBuysNoMoreThanOneBurst) {
  Pacer p(PacerConfig{8, 3, kFrame}, 0);
  p.advance(1'000'000'000);  // a second idle
  int sent = 0;
  while (p.may_send()) {
    p.on_sent(kFrame);
    ++sent;
  }
  EXPECT_EQ(sent, 3);
}

// A greedy sender on a virtual clock that jumps to the pacer's next send time: over any window it
// gets rate x window + one burst, and no less than that minus one burst.
TEST(PacerTest, GreedySenderGetsTheLineRate) {
  for (double gbps : {1.0, 10.0, 100.0, 400.0}) {
    for (uint32_t burst : {1u, 8u, 64u}) {
      const Nanos start = 5'000;
      Pacer p(PacerConfig{gbps, burst, kFrame}, start);
      Nanos now = start;
      const Nanos window = 10'000'000;  // 10 ms
      uint64_t frames = 0;
      uint64_t largest_burst = 0, current = 0;
      while (now < start + window) {
        p.advance(now);
        if (p.may_send()) {
          p.on_sent(kFrame);
          ++frames;
          largest_burst = std::max(largest_burst, ++current);
          continue;
        }
        const Nanos next = p.next_send_time();
        ASSERT_GT(next, now);
        now = next;
        current = 0;
      }
      const double budget = gbps / 8 * static_cast<double>(window) / kCost;  // frames
      EXPECT_LE(static_cast<double>(frames), budget + burst + 1) << gbps << " Gb/s burst " << burst;
      EXPECT_GE(static_cast<double>(frames), budget - 1) << gbps << " Gb/s burst " << burst;
      EXPECT_EQ(largest_burst, burst) << gbps << " Gb/s";
    }
  }
}

// A sender that sleeps until wake_time() sends a quarter burst per wake, still at the line rate.
TEST(PacerTest, ASleepingSenderWakesForAQuarterBurstAndKeepsTheLineRate) {
  Pacer p(PacerConfig{8, 16, kFrame}, 0);  // 1 byte per ns
  while (p.may_send()) p.on_sent(kFrame);
  EXPECT_EQ(p.next_send_time(), static_cast<Nanos>(kCost));
  EXPECT_EQ(p.wake_time(), static_cast<Nanos>(4 * kCost));
  Nanos now = 0;
  uint64_t frames = 0, wakes = 0;
  while (now < 10'000'000) {
    now = p.wake_time();
    p.advance(now);
    ++wakes;
    while (p.may_send()) {
      p.on_sent(kFrame);
      ++frames;
    }
  }
  EXPECT_NEAR(static_cast<double>(frames), 10'000'000 / kCost, 16);
  EXPECT_NEAR(static_cast<double>(frames) / static_cast<double>(wakes), 4, 0.1);
  // One frame of depth: a wake per frame, as before.
  Pacer single(PacerConfig{8, 1, kFrame}, 0);
  single.on_sent(kFrame);
  EXPECT_EQ(single.wake_time(), single.next_send_time());
}

TEST(PacerTest, SmallFramesCostTheirOwnSize) {
  Pacer p(PacerConfig{8, 2, kFrame}, 0);
  // ACK-sized frames: the bucket (2 x 1024 B) holds many of them before it runs dry.
  int sent = 0;
  while (p.may_send()) {
    p.on_sent(64);
    ++sent;
  }
  EXPECT_EQ(sent, static_cast<int>(std::floor((2 * kCost - kCost) / (64 + kEthernetLineOverhead))) + 1);
}

TEST(PacerTest, ValidateRejectsNonsense) {
  EXPECT_TRUE(validate(PacerConfig{0, 0, 0}).ok());  // off
  EXPECT_TRUE(validate(PacerConfig{100, 32, 4200}).ok());
  EXPECT_THAT(validate(PacerConfig{-1, 32, 4200}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(validate(PacerConfig{std::nan(""), 32, 4200}),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(validate(PacerConfig{std::numeric_limits<double>::infinity(), 32, 4200}),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(validate(PacerConfig{10, 0, 4200}), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::replayer::engine
