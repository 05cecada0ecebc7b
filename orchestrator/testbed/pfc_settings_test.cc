#include "orchestrator/testbed/pfc_settings.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::testbed {
namespace {

v1::VirtualTestbedSpec lossless_fabric() {
  v1::VirtualTestbedSpec s;
  s.set_hosts(4);
  s.set_leaves(2);
  s.set_spines(1);
  s.set_host_link_gbps(1);
  s.set_fabric_link_gbps(1);
  s.mutable_pfc()->set_lossless(true);
  return s;
}

TEST(PfcSettingsTest, WithoutPfcTheFabricIsLossy) {
  v1::VirtualTestbedSpec s = lossless_fabric();
  s.clear_pfc();
  EXPECT_FALSE(resolve_pfc(s).lossless);
  EXPECT_FALSE(check_pfc(s).has_value());
  s.mutable_pfc()->set_lossless(false);
  s.mutable_pfc()->set_xoff_bytes(1);  // not checked while lossy
  EXPECT_FALSE(resolve_pfc(s).lossless);
  EXPECT_FALSE(check_pfc(s).has_value());
}

TEST(PfcSettingsTest, PollsShorterThanTheFloorAreRefused) {
  v1::VirtualTestbedSpec s = lossless_fabric();
  s.mutable_pfc()->set_poll_us(50);
  ASSERT_TRUE(check_pfc(s).has_value());
  EXPECT_EQ(check_pfc(s)->field, "pfc.poll_us");
  s.mutable_pfc()->set_poll_us(static_cast<uint32_t>(kMinPfcPoll.count()));
  EXPECT_FALSE(check_pfc(s).has_value());
}

// BGP and BFD send CS6 (priority 6): they have a queue of their own beside RoCE's, unless the
// lossless priority is theirs.
TEST(PfcSettingsTest, LosslessOnAFabricRoutedByBgpKeepsPrioritySixForItsSessions) {
  v1::VirtualTestbedSpec s = lossless_fabric();
  s.set_routing(v1::VirtualTestbedSpec::ROUTING_BGP);
  EXPECT_FALSE(check_pfc(s).has_value());
  s.mutable_pfc()->set_priority(6);
  ASSERT_TRUE(check_pfc(s).has_value());
  EXPECT_EQ(check_pfc(s)->field, "pfc.priority");
  EXPECT_NE(check_pfc(s)->what.find("BGP's and BFD's"), std::string::npos) << check_pfc(s)->what;
  s.mutable_pfc()->set_lossless(false);
  EXPECT_FALSE(check_pfc(s).has_value());
}

TEST(PfcSettingsTest, ANicBufferWithoutRoomAboveTheHostsXoffIsRefused) {
  v1::VirtualTestbedSpec s = lossless_fabric();
  s.mutable_pfc()->set_host_xoff_frames(32);
  s.set_host_rx_buffer_frames(32);
  ASSERT_TRUE(check_pfc(s).has_value());
  EXPECT_EQ(check_pfc(s)->field, "pfc.host_xoff_frames");
  s.set_host_rx_buffer_frames(96);
  EXPECT_FALSE(check_pfc(s).has_value()) << check_pfc(s)->what;
}

TEST(PfcSettingsTest, XoffLeavesHeadroomForFourPollsAtTheFastestLink) {
  v1::VirtualTestbedSpec s = lossless_fabric();
  s.set_host_link_gbps(0.1);
  s.set_fabric_link_gbps(0.4);
  s.mutable_pfc()->set_xoff_bytes(64000);
  // 0.4 Gbit/s for 4 x 500 us: 100 KB behind xoff, 164 KB in all.
  s.mutable_leaf_down()->set_buffer_bytes(128000);
  const auto tight = check_pfc(s);
  ASSERT_TRUE(tight.has_value());
  EXPECT_EQ(tight->field, "pfc.xoff_bytes");
  EXPECT_NE(tight->what.find("headroom behind it (100000 bytes"), std::string::npos) << tight->what;
  s.mutable_leaf_down()->set_buffer_bytes(164000);
  EXPECT_FALSE(check_pfc(s).has_value()) << check_pfc(s)->what;
}

TEST(PfcSettingsTest, ALossyTestbedsSettingsAreResolvedForTheVariantsThatTurnLosslessOn) {
  v1::VirtualTestbedSpec s = lossless_fabric();
  s.mutable_pfc()->set_lossless(false);
  s.mutable_pfc()->set_priority(5);
  s.mutable_pfc()->set_xoff_bytes(64000);
  s.mutable_pfc()->mutable_watchdog()->set_detect_ns(50'000'000);
  const ResolvedPfc r = resolve_pfc(s);
  EXPECT_FALSE(r.lossless);
  EXPECT_EQ(r.priority, 5u);
  EXPECT_EQ(r.xoff_bytes, 64000u);
  EXPECT_EQ(r.xon_bytes, 32000u);
  EXPECT_EQ(r.watchdog_detect.count(), 50'000'000);
}

TEST(PfcSettingsTest, UnsetFieldsTakeTheDefaultsAndPriorityZeroIsAPriority) {
  v1::VirtualTestbedSpec s = lossless_fabric();
  ResolvedPfc r = resolve_pfc(s);
  EXPECT_TRUE(r.lossless);
  EXPECT_EQ(r.priority, kDefaultPfcPriority);
  EXPECT_EQ(r.quanta, kDefaultPauseQuanta);
  EXPECT_EQ(r.xoff_bytes, kDefaultXoffBytes);
  EXPECT_EQ(r.xon_bytes, kDefaultXoffBytes / 2);
  EXPECT_EQ(r.poll, kDefaultPfcPoll);
  EXPECT_EQ(r.watchdog_detect.count(), 0);
  s.mutable_pfc()->set_priority(0);
  s.mutable_pfc()->set_xoff_bytes(100000);
  s.mutable_pfc()->mutable_watchdog()->set_detect_ns(50'000'000);
  r = resolve_pfc(s);
  EXPECT_EQ(r.priority, 0u);
  EXPECT_EQ(r.xon_bytes, 50000u);
  EXPECT_EQ(r.watchdog_detect.count(), 50'000'000);
  EXPECT_EQ(r.watchdog_restore, kDefaultWatchdogRestore);
  EXPECT_FALSE(check_pfc(s).has_value());
}

TEST(PfcSettingsTest, RefusesWhatCannotBeLossless) {
  auto field_of = [](const v1::VirtualTestbedSpec& s) {
    auto e = check_pfc(s);
    return e ? e->field : std::string("none");
  };
  v1::VirtualTestbedSpec s = lossless_fabric();
  s.mutable_pfc()->set_priority(8);
  EXPECT_EQ(field_of(s), "pfc.priority");
  s = lossless_fabric();
  s.mutable_pfc()->set_xon_bytes(kDefaultXoffBytes);
  EXPECT_EQ(field_of(s), "pfc.xon_bytes");
  s = lossless_fabric();
  s.set_fabric_link_gbps(0);
  EXPECT_EQ(field_of(s), "fabric_link_gbps");
  s = lossless_fabric();
  s.mutable_leaf_up()->set_buffer_bytes(200 * 1024);  // less than twice the default xoff
  EXPECT_EQ(field_of(s), "pfc.xoff_bytes");
  EXPECT_NE(check_pfc(s)->what.find("leaf_up"), std::string::npos);
  s = lossless_fabric();
  s.mutable_pfc()->set_host_xoff_frames(10);
  s.mutable_pfc()->set_host_xon_frames(10);
  EXPECT_EQ(field_of(s), "pfc.host_xon_frames");
  s = lossless_fabric();
  s.mutable_pfc()->set_host_xoff_frames(5000);
  EXPECT_EQ(field_of(s), "pfc.host_xoff_frames");
}

}  // namespace
}  // namespace collide::orchestrator::testbed
