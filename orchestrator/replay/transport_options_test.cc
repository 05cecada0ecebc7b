#include "orchestrator/replay/transport_options.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::replay {
namespace {

TEST(TransportOptionsTest, UnsetFieldsTakeTheOneSetOfDefaults) {
  auto o = resolve_transport(v1::TransportSettings());
  ASSERT_TRUE(o.ok()) << o.status().to_string();
  EXPECT_EQ(o->expand.slice_bytes, 512u * 1024);
  EXPECT_EQ(o->expand.channels, 2u);
  EXPECT_EQ(o->expand.qps_per_connection, 1u);
  EXPECT_EQ(o->qp.mtu, 1024u);
  EXPECT_EQ(o->qp.timeout_exponent, 14u);
  EXPECT_EQ(o->qp.retry_count, 7u);
  EXPECT_EQ(o->qp.max_outstanding, 256u);
  EXPECT_EQ(o->qp.ack_every, 16u);
  EXPECT_EQ(o->qp.recovery, replayer::transport::Recovery::kGoBackN);
  EXPECT_EQ(o->expand.all_reduce, replayer::collectives::AllReduceAlgorithm::kRing);
  EXPECT_FALSE(o->dcqcn.enabled);
  EXPECT_TRUE(o->expand.pxn);  // NCCL's default (NCCL_PXN_DISABLE unset)
  EXPECT_FALSE(with_defaults(v1::TransportSettings()).pxn_disable());
  EXPECT_EQ(o->dscp, 26);  // NCCL_IB_TC 106
  EXPECT_EQ(with_defaults(v1::TransportSettings()).dscp(), 26u);
}

// DSCP 0 is a class of its own (best effort), not "the default".
TEST(TransportOptionsTest, DscpZeroIsKeptAndAboveSixBitsIsRefused) {
  v1::TransportSettings t;
  t.set_dscp(0);
  auto zero = resolve_transport(t);
  ASSERT_TRUE(zero.ok()) << zero.status().to_string();
  EXPECT_EQ(zero->dscp, 0);
  EXPECT_EQ(with_defaults(t).dscp(), 0u);
  t.set_dscp(64);
  auto wide = resolve_transport(t);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().message().find("transport.dscp"), std::string::npos) << wide.status().message();
}

TEST(TransportOptionsTest, SetFieldsWin) {
  v1::TransportSettings t;
  t.set_slice_bytes(1 << 20);
  t.set_mtu_bytes(4096);
  t.set_recovery(v1::TransportSettings::RECOVERY_SELECTIVE_REPEAT);
  t.set_all_reduce(v1::TransportSettings::ALL_REDUCE_TREE);
  t.set_dcqcn(true);
  t.set_pxn_disable(true);
  auto o = resolve_transport(t);
  ASSERT_TRUE(o.ok()) << o.status().to_string();
  EXPECT_EQ(o->expand.slice_bytes, 1u << 20);
  EXPECT_EQ(o->qp.mtu, 4096u);
  EXPECT_EQ(o->qp.recovery, replayer::transport::Recovery::kSelectiveRepeat);
  EXPECT_EQ(o->expand.all_reduce, replayer::collectives::AllReduceAlgorithm::kTree);
  EXPECT_TRUE(o->dcqcn.enabled);
  EXPECT_FALSE(o->expand.pxn);
  EXPECT_EQ(with_defaults(t).channels(), 2u);
  EXPECT_TRUE(with_defaults(t).pxn_disable());
  t.set_recovery(v1::TransportSettings::RECOVERY_OUT_OF_ORDER);
  t.set_reorder_window_ns(50'000);
  auto ooo = resolve_transport(t);
  ASSERT_TRUE(ooo.ok()) << ooo.status().to_string();
  EXPECT_EQ(ooo->qp.recovery, replayer::transport::Recovery::kOutOfOrder);
  EXPECT_EQ(ooo->qp.reorder_window_ns, 50'000u);
  EXPECT_EQ(ooo->qp.reorder_packets, 64u);
}

TEST(TransportOptionsTest, RefusesSettingsTheTransportCannotRunAndNamesThem) {
  v1::TransportSettings t;
  t.set_mtu_bytes(100);
  auto o = resolve_transport(t);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("transport"), std::string::npos) << o.status().message();
}

}  // namespace
}  // namespace collide::orchestrator::replay
