#include "orchestrator/replay/lossless_request.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::replay {
namespace {

TEST(LosslessRequestTest, ALosslessTestbedsHostSettingsReachTheEngine) {
  v1::VirtualTestbedSpec spec;
  spec.mutable_pfc()->set_lossless(true);
  spec.mutable_pfc()->set_priority(5);
  spec.mutable_pfc()->set_host_xoff_frames(64);
  spec.mutable_pfc()->set_quanta(2000);
  const testbed::ResolvedPfc pfc = testbed::resolve_pfc(spec);
  v1::ReplayRequest request;
  *request.mutable_lossless() = lossless_receive(pfc);
  const replayer::engine::LosslessConfig c = lossless_config(request);
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.priority, 5u);
  EXPECT_EQ(c.xoff_frames, 64u);
  EXPECT_EQ(c.xon_frames, 16u);  // a quarter of xoff unless given
  EXPECT_EQ(c.quanta, 2000u);
  EXPECT_TRUE(replayer::engine::validate(c).ok());
}

TEST(LosslessRequestTest, TheDefaultsAreUsableAndARequestWithoutLosslessIsOff) {
  v1::ReplayRequest request;
  EXPECT_FALSE(lossless_config(request).enabled);
  *request.mutable_lossless() = lossless_receive(testbed::ResolvedPfc{});
  const replayer::engine::LosslessConfig c = lossless_config(request);
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.priority, testbed::kDefaultPfcPriority);
  EXPECT_EQ(c.xoff_frames, testbed::kDefaultHostXoffFrames);
  EXPECT_EQ(c.quanta, testbed::kDefaultPauseQuanta);
  EXPECT_TRUE(replayer::engine::validate(c).ok());
}

}  // namespace
}  // namespace collide::orchestrator::replay
