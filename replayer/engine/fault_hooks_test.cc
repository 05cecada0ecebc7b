#include "replayer/engine/fault_hooks.h"

#include <gtest/gtest.h>

namespace collide::replayer::engine {
namespace {

using namespace std::chrono_literals;

// A window aimed at one NIC acts on that NIC's engines only; the others pass it by, and the
// windows keep their indexes among those configured.
TEST(FaultHooksTest, AWindowAimedAtANicActsOnlyOnItsEngines) {
  const std::vector<DrainPause> pauses = {{0us, 10us, 1u}, {0us, 10us, std::nullopt}};
  const std::vector<SendDelay> delays = {{0us, 10us, 3us, 1u}};
  FaultHooks nic0(pauses, delays, 0);
  FaultHooks nic1(pauses, delays, 1);
  for (FaultHooks* h : {&nic0, &nic1}) {
    h->start(1'000);
    h->observe(2'000);
    h->observe(20'000);
  }
  EXPECT_EQ(nic0.send_delay(2'000), 0u);
  EXPECT_EQ(nic1.send_delay(2'000), 3'000u);
  // NIC 0 still pauses for the host-wide window (index 1), never for NIC 1's (index 0).
  ASSERT_EQ(nic0.windows().size(), 1u);
  EXPECT_EQ(nic0.windows()[0].index, 1u);
  ASSERT_EQ(nic1.windows().size(), 3u);
  EXPECT_EQ(nic1.windows()[0].index, 0u);
  EXPECT_EQ(nic1.windows()[1].index, 1u);
  EXPECT_EQ(nic1.windows()[2].kind, HookWindow::Kind::kSendDelay);

  FaultHooks only_nic1_pause({{0us, 10us, 1u}}, {}, 0);
  only_nic1_pause.start(1'000);
  EXPECT_FALSE(only_nic1_pause.draining_paused(2'000));
  EXPECT_EQ(only_nic1_pause.next_change(2'000), std::nullopt);
}

TEST(FaultHooksTest, WindowsCountFromTheStartAndRecordWhenTheyHeld) {
  FaultHooks hooks({{10us, 5us, {}}}, {{2us, 3us, 7us, {}}, {0us, 0us, 1us, {}}});
  EXPECT_FALSE(hooks.draining_paused(1'000'000));  // not started: nothing holds
  hooks.start(1'000'000);
  hooks.start(5'000'000);  // the first start counts
  const transport::Nanos t0 = 1'000'000;
  hooks.observe(t0);
  EXPECT_EQ(hooks.send_delay(t0), 1'000u);  // the open window from 0
  EXPECT_EQ(hooks.send_delay(t0 + 2'000), 7'000u);  // the longer of two in force
  EXPECT_EQ(hooks.send_delay(t0 + 5'000), 1'000u);  // [2, 5) us is over
  EXPECT_FALSE(hooks.draining_paused(t0 + 9'999));
  EXPECT_TRUE(hooks.draining_paused(t0 + 10'000));
  EXPECT_TRUE(hooks.draining_paused(t0 + 14'999));
  EXPECT_FALSE(hooks.draining_paused(t0 + 15'000));
  EXPECT_EQ(hooks.next_change(t0), t0 + 2'000);
  EXPECT_EQ(hooks.next_change(t0 + 12'000), t0 + 15'000);
  EXPECT_EQ(hooks.next_change(t0 + 15'000), std::nullopt);
  for (transport::Nanos t = t0; t <= t0 + 20'000; t += 500) hooks.observe(t);
  const auto windows = hooks.windows();
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[0].kind, HookWindow::Kind::kDrainPause);
  EXPECT_EQ(windows[0].start_ns, t0 + 10'000);
  EXPECT_EQ(windows[0].end_ns, t0 + 15'000);
  EXPECT_EQ(windows[1].start_ns, t0 + 2'000);
  EXPECT_EQ(windows[1].end_ns, t0 + 5'000);
  EXPECT_EQ(windows[2].end_ns, 0u);  // open: still in force
  // Each says which window of its kind it is, so a caller can tell them apart.
  EXPECT_EQ(windows[0].index, 0u);
  EXPECT_EQ(windows[1].index, 0u);
  EXPECT_EQ(windows[2].index, 1u);
}

TEST(FaultHooksTest, AWindowThatNeverBeganLeavesTheOthersTheirIndex) {
  FaultHooks hooks({{100us, 5us, {}}, {1us, 2us, {}}}, {});
  hooks.start(0);
  for (transport::Nanos t = 0; t <= 10'000; t += 500) hooks.observe(t);  // the run ends at 10 us
  const auto windows = hooks.windows();
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].index, 1u);
  EXPECT_EQ(windows[0].start_ns, 1'000u);
}

TEST(FaultHooksTest, NoHooksNeverPauseOrDelay) {
  FaultHooks hooks;
  EXPECT_TRUE(hooks.empty());
  hooks.start(0);
  hooks.observe(0);
  EXPECT_FALSE(hooks.draining_paused(0));
  EXPECT_EQ(hooks.send_delay(123), 0u);
  EXPECT_TRUE(hooks.windows().empty());
}

}  // namespace
}  // namespace collide::replayer::engine
