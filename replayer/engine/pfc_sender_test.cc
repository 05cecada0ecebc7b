#include "replayer/engine/pfc_sender.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::replayer::engine {
namespace {

using transport::Nanos;

constexpr double kLineGbps = 10;
const wire::MacAddress kOwnMac{{0x02, 0, 0, 0, 0, 0x0b}};

LosslessConfig lossless() {
  LosslessConfig c;
  c.enabled = true;
  c.priority = 3;
  c.xoff_frames = 8;
  c.xon_frames = 2;
  c.quanta = 1000;  // 51.2 us at 10 Gb/s
  return c;
}

TEST(PfcSenderTest, PausesItsPriorityWhenXoffFramesWait) {
  PfcSender s(lossless(), kLineGbps, kOwnMac);
  EXPECT_FALSE(s.due(7, 0).has_value());
  auto f = s.due(8, 100);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->source, kOwnMac);
  EXPECT_EQ(f->enabled, 1 << 3);  // only RoCE's priority
  EXPECT_EQ(f->quanta[3], 1000);
  EXPECT_FALSE(f->link_pause);
  s.sent(*f, 100);
  EXPECT_TRUE(s.pausing());
  EXPECT_EQ(s.counters().pauses_sent, 1u);
  // Nothing more until the refresh is due.
  EXPECT_FALSE(s.due(20, 101).has_value());
}

TEST(PfcSenderTest, RefreshesAtHalfThePauseWhileAboveXon) {
  PfcSender s(lossless(), kLineGbps, kOwnMac);
  s.sent(*s.due(8, 0), 0);
  const Nanos pause_ns = wire::pause_quanta_ns(1000, kLineGbps);
  ASSERT_EQ(pause_ns, 51'200u);
  ASSERT_TRUE(s.refresh_at().has_value());
  EXPECT_EQ(*s.refresh_at(), pause_ns / 2);
  EXPECT_FALSE(s.due(3, pause_ns / 2 - 1).has_value());  // still above xon, not due yet
  auto refresh = s.due(3, pause_ns / 2);
  ASSERT_TRUE(refresh.has_value());
  EXPECT_EQ(refresh->quanta[3], 1000);
  s.sent(*refresh, pause_ns / 2);
  // Each refresh lands before the pause it renews runs out.
  EXPECT_LT(*s.refresh_at(), pause_ns / 2 + pause_ns);
  EXPECT_EQ(s.counters().pauses_sent, 2u);
  EXPECT_EQ(s.counters().resumes_sent, 0u);
}

TEST(PfcSenderTest, ResumesOnceAtXon) {
  PfcSender s(lossless(), kLineGbps, kOwnMac);
  s.sent(*s.due(9, 0), 0);
  auto resume = s.due(2, 10);
  ASSERT_TRUE(resume.has_value());
  EXPECT_EQ(resume->enabled, 1 << 3);
  EXPECT_EQ(resume->quanta[3], 0);
  // Not taken by the port: asked for again.
  EXPECT_TRUE(s.due(2, 11).has_value());
  s.sent(*resume, 11);
  EXPECT_FALSE(s.pausing());
  EXPECT_EQ(s.counters().resumes_sent, 1u);
  // One resume: nothing more however long the buffer stays low, and no refresh.
  EXPECT_FALSE(s.refresh_at().has_value());
  for (Nanos t = 12; t < 1'000'000; t += 10'000) EXPECT_FALSE(s.due(0, t).has_value()) << t;
  // Between xon and xoff without a pause in force: still nothing.
  EXPECT_FALSE(s.due(7, 2'000'000).has_value());
}

TEST(PfcSenderTest, SendsNothingWhenNotLossless) {
  LosslessConfig off = lossless();
  off.enabled = false;
  PfcSender s(off, kLineGbps, kOwnMac);
  for (size_t waiting : {0u, 8u, 100u, 10'000u}) {
    EXPECT_FALSE(s.due(waiting, 1'000).has_value()) << waiting;
  }
  EXPECT_FALSE(PfcSender().due(1'000'000, 0).has_value());
}

TEST(PfcSenderTest, RejectsSettingsThatCannotWork) {
  EXPECT_TRUE(validate(lossless()).ok());
  auto with = [](auto change) {
    LosslessConfig c = lossless();
    change(c);
    return validate(c);
  };
  EXPECT_THAT(with([](LosslessConfig& c) { c.priority = 8; }),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(with([](LosslessConfig& c) { c.xoff_frames = 0; }),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(with([](LosslessConfig& c) { c.xon_frames = 8; }),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(with([](LosslessConfig& c) { c.xoff_frames = kMaxXoffFrames + 1; }),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(with([](LosslessConfig& c) { c.quanta = 0; }),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(with([](LosslessConfig& c) { c.quanta = 0x10000; }),
              StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::replayer::engine
