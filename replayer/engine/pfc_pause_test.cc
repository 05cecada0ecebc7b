#include "replayer/engine/pfc_pause.h"

#include <gtest/gtest.h>

namespace collide::replayer::engine {
namespace {

wire::PauseFrame pfc(uint8_t priority, uint16_t quanta) {
  wire::PauseFrame f;
  f.enabled = static_cast<uint8_t>(1 << priority);
  f.quanta[priority] = quanta;
  return f;
}

// At 1 Gb/s a quantum is 512 ns.
constexpr double kGbps = 1;

TEST(PfcPauseTest, HoldsForTheQuantaAtTheLinksSpeed) {
  PfcPause pause({3, kGbps});
  EXPECT_FALSE(pause.holds(1000));
  pause.on_frame(pfc(3, 100), 1000);  // 51.2 us
  EXPECT_TRUE(pause.holds(1000));
  EXPECT_TRUE(pause.holds(1000 + 51'199));
  EXPECT_EQ(pause.until(), 1000 + 51'200);
  EXPECT_FALSE(pause.holds(1000 + 51'200));
  EXPECT_EQ(pause.until(), std::nullopt);
  EXPECT_EQ(pause.counters().pause_frames, 1u);
  EXPECT_EQ(pause.counters().paused_ns, 51'200u);
}

TEST(PfcPauseTest, ALaterFrameReplacesTheTimeLeftAndZeroResumes) {
  PfcPause pause({3, kGbps});
  pause.on_frame(pfc(3, 100), 0);        // until 51.2 us
  pause.on_frame(pfc(3, 100), 10'000);   // refreshed: until 61.2 us
  EXPECT_TRUE(pause.holds(60'000));
  pause.on_frame(pfc(3, 0), 60'000);     // XON
  EXPECT_FALSE(pause.holds(60'000));
  EXPECT_EQ(pause.counters().pause_frames, 3u);
  EXPECT_EQ(pause.counters().paused_ns, 60'000u);
}

TEST(PfcPauseTest, OtherPrioritiesHoldNothingAndAnEthernetPauseHoldsAll) {
  PfcPause pause({3, kGbps});
  pause.on_frame(pfc(6, 1000), 0);  // CNPs' priority, say: RoCE data goes on
  EXPECT_FALSE(pause.holds(1));
  EXPECT_EQ(pause.counters().other_priority, 1u);
  EXPECT_EQ(pause.counters().pause_frames, 0u);
  wire::PauseFrame link;
  link.link_pause = true;
  link.enabled = 0xff;
  link.quanta.fill(10);
  pause.on_frame(link, 100);
  EXPECT_TRUE(pause.holds(100 + 5119));
  EXPECT_FALSE(pause.holds(100 + 5120));
}

TEST(PfcPauseTest, HeldTimeIsCountedUpToTheLastLookWhileStillPaused) {
  PfcPause pause({3, kGbps});
  pause.on_frame(pfc(3, 0xffff), 0);  // 33.5 ms
  EXPECT_TRUE(pause.holds(1'000'000));
  EXPECT_EQ(pause.counters().paused_ns, 1'000'000u);
  EXPECT_TRUE(pause.holds(2'000'000));
  EXPECT_EQ(pause.counters().paused_ns, 2'000'000u);
}

}  // namespace
}  // namespace collide::replayer::engine
