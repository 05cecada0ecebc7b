#include "orchestrator/testbed/pfc_port_state.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::testbed {
namespace {

constexpr int64_t kMs = 1'000'000;

PfcPortConfig one_gbps() {
  PfcPortConfig c;
  c.gbps = 1;
  c.quanta = 1000;  // 512 us at 1 Gbit/s
  c.xoff_bytes = 100'000;
  c.xon_bytes = 50'000;
  return c;
}

TEST(PfcPortStateTest, AQuantumIs512BitTimes) {
  EXPECT_EQ(pause_ns(1, 1), 512);
  EXPECT_EQ(pause_ns(0xffff, 100), 335'539);  // 65535 x 5.12 ns
  EXPECT_EQ(pause_ns(10, 0), 0);
}

TEST(PfcPortStateTest, APauseHoldsForItsQuantaAndALaterFrameReplacesTheTimeLeft) {
  PfcPortState port(one_gbps());
  EXPECT_FALSE(port.should_hold(0));
  port.on_peer_pause(1000, 1 * kMs);  // to 1.512 ms
  EXPECT_TRUE(port.should_hold(1 * kMs));
  EXPECT_TRUE(port.should_hold(1 * kMs + 500'000));
  EXPECT_FALSE(port.should_hold(1 * kMs + 512'000));
  EXPECT_EQ(port.counters().paused_ns, 512'000u);
  port.on_peer_pause(1000, 2 * kMs);
  EXPECT_TRUE(port.should_hold(2 * kMs));
  port.on_peer_pause(0, 2 * kMs + 100'000);  // resume now
  EXPECT_FALSE(port.should_hold(2 * kMs + 100'000));
  EXPECT_EQ(port.counters().pause_frames, 3u);
  EXPECT_EQ(port.counters().paused_ns, 612'000u);
}

TEST(PfcPortStateTest, PausesThePeerAtXoffKeepsThePauseAliveAndResumesAtXon) {
  PfcPortState port(one_gbps());
  using Send = PfcPortState::Send;
  EXPECT_EQ(port.on_held_bytes(99'999, 0), Send::kNothing);
  EXPECT_EQ(port.on_held_bytes(100'000, 1), Send::kPause);
  EXPECT_TRUE(port.pausing_peer());
  EXPECT_EQ(port.on_held_bytes(120'000, 2), Send::kNothing);          // still within the pause
  EXPECT_EQ(port.on_held_bytes(70'000, 1 + 256'000), Send::kPause);  // half of it gone: refreshed
  EXPECT_EQ(port.on_held_bytes(50'001, 300'000), Send::kNothing);     // between xon and xoff
  EXPECT_EQ(port.on_held_bytes(50'000, 300'001), Send::kResume);
  EXPECT_FALSE(port.pausing_peer());
  EXPECT_EQ(port.on_held_bytes(50'000, 400'000), Send::kNothing);
  EXPECT_EQ(port.on_held_bytes(90'000, 500'000), Send::kNothing);     // below xoff again
  EXPECT_EQ(port.counters().pause_frames_sent, 3u);
}

TEST(PfcPortStateTest, WatchdogIgnoresAStormForTheRestoreTimeThenHonoursPausesAgain) {
  PfcPortConfig c = one_gbps();
  c.watchdog_detect_ns = 10 * kMs;
  c.watchdog_restore_ns = 20 * kMs;
  PfcPortState port(c);
  // A storm: a pause every 0.1 ms, each for 512 us, from t = 5 ms on.
  bool held_at_14 = false, held_at_16 = false, held_at_30 = false, held_at_36 = false, held_at_46 = false;
  for (int64_t t = 5 * kMs; t <= 50 * kMs; t += kMs / 10) {
    port.on_peer_pause(1000, t);
    const bool held = port.should_hold(t);
    if (t == 14 * kMs) held_at_14 = held;
    if (t == 16 * kMs) held_at_16 = held;
    if (t == 30 * kMs) held_at_30 = held;
    if (t == 36 * kMs) held_at_36 = held;
    if (t == 46 * kMs) held_at_46 = held;
  }
  EXPECT_TRUE(held_at_14);
  EXPECT_FALSE(held_at_16);  // detected at 15 ms
  EXPECT_FALSE(held_at_30);  // recovering to 35 ms
  EXPECT_TRUE(held_at_36);   // honoured again; still stormed
  EXPECT_FALSE(held_at_46);  // detected again at 45 ms
  const auto& events = port.counters().watchdog_events;
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].held_since_ns, 5 * kMs);
  EXPECT_EQ(events[0].detected_ns, 15 * kMs);
  EXPECT_EQ(events[0].restored_ns, 35 * kMs);
  EXPECT_EQ(events[1].held_since_ns, 35 * kMs);
  EXPECT_EQ(events[1].detected_ns, 45 * kMs);
  EXPECT_EQ(events[1].restored_ns, 0);
  EXPECT_EQ(port.counters().paused_ns, 20u * kMs);  // 5-15 and 35-45
}

// The watchdog acts and gives pauses back when the switch looks, not when its times fall due: what
// it reports is what happened.
TEST(PfcPortStateTest, DetectionAndRestorationAreWhenALookFindsThem) {
  PfcPortConfig c = one_gbps();
  c.watchdog_detect_ns = 10 * kMs;
  c.watchdog_restore_ns = 20 * kMs;
  PfcPortState port(c);
  for (int64_t t = 0; t <= 36 * kMs; t += 3 * kMs) {  // a look every 3 ms, a long pause at each
    port.on_peer_pause(0xffff, t);
    port.should_hold(t);
  }
  const auto& events = port.counters().watchdog_events;
  ASSERT_GE(events.size(), 1u);
  EXPECT_EQ(events[0].held_since_ns, 0);
  EXPECT_EQ(events[0].detected_ns, 12 * kMs);  // the first look 10 ms or more into the hold
  EXPECT_EQ(events[0].restored_ns, 33 * kMs);  // the first look once 20 ms had passed (32 ms)
}

TEST(PfcPortStateTest, PausesWithBreaksNeverTripTheWatchdog) {
  PfcPortConfig c = one_gbps();
  c.watchdog_detect_ns = 2 * kMs;
  c.watchdog_restore_ns = 20 * kMs;
  PfcPortState port(c);
  for (int64_t t = 0; t < 50 * kMs; t += kMs) {  // 512 us of pause in every ms
    port.on_peer_pause(1000, t);
    port.should_hold(t);
    port.should_hold(t + kMs * 6 / 10);
  }
  EXPECT_TRUE(port.counters().watchdog_events.empty());
}

}  // namespace
}  // namespace collide::orchestrator::testbed
