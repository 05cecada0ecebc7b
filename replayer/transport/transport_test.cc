#include <gtest/gtest.h>

#include "replayer/transport/loopback_transfer.h"

namespace collide::replayer::transport {
namespace {

constexpr Nanos kSecond = 1'000'000'000;

QpConfig config(Recovery recovery) {
  QpConfig c;
  c.recovery = recovery;
  c.mtu = 4096;
  c.timeout_exponent = 14;  // 4.096 us * 2^14 = 67 ms: far above the link's RTT
  return c;
}

std::vector<uint64_t> messages(int count, uint64_t bytes) {
  return std::vector<uint64_t>(static_cast<size_t>(count), bytes);
}

class TransportTest : public ::testing::TestWithParam<Recovery> {};

TEST_P(TransportTest, LosslessTransferIsExactAndNearLineRate) {
  const auto r = run_loopback_transfer(config(GetParam()), {}, {}, messages(8, 1 << 20), kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_EQ(r.bytes, 8u << 20);
  EXPECT_EQ(r.responder.bytes_received, 8u << 20);
  EXPECT_EQ(r.requester.retransmitted_packets, 0u);
  EXPECT_EQ(r.requester.packets_sent, 8u * 256);
  EXPECT_EQ(r.completions.size(), 8u);
  // 4 KiB payload in a 4,154-byte frame at 100 Gb/s, minus one RTT of start-up.
  EXPECT_GT(r.goodput_gbps(), 95.0);
  EXPECT_LT(r.goodput_gbps(), 100.0);
}

TEST_P(TransportTest, SmallAndEmptyMessagesComplete) {
  const auto r = run_loopback_transfer(config(GetParam()), {}, {}, {0, 1, 4095, 4096, 4097},
                                       kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_EQ(r.bytes, 0u + 1 + 4095 + 4096 + 4097);
  EXPECT_EQ(r.requester.packets_sent, 1u + 1 + 1 + 1 + 2);
}

TEST_P(TransportTest, OneLostPacketIsRecoveredByNak) {
  LinkConfig lossy;
  lossy.drop_packets = {100};
  const auto r = run_loopback_transfer(config(GetParam()), lossy, {}, messages(1, 4u << 20), kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_EQ(r.data_packets_dropped, 1u);
  EXPECT_EQ(r.responder.bytes_received, 4u << 20) << "every byte exactly once";
  EXPECT_EQ(r.requester.timeouts, 0u);
  EXPECT_GE(r.requester.naks, 1u);
  if (GetParam() == Recovery::kSelectiveRepeat) {
    EXPECT_EQ(r.requester.retransmitted_packets, 1u);
  } else {
    // Go-back-N resends everything sent after the hole before the NAK came back: about one
    // bandwidth-delay product (RTT ~4.7 us at 100 Gb/s is ~14 packets).
    EXPECT_GT(r.requester.retransmitted_packets, 5u);
    EXPECT_LT(r.requester.retransmitted_packets, 40u);
  }
}

TEST_P(TransportTest, LostTailPacketIsRecoveredByTimeout) {
  LinkConfig lossy;
  lossy.drop_packets = {15};  // the last packet of a 16-packet message: nothing follows to NAK it
  const auto r = run_loopback_transfer(config(GetParam()), lossy, {}, messages(1, 16 * 4096), kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_GE(r.elapsed_ns, config(GetParam()).timeout_ns());
  EXPECT_EQ(r.responder.bytes_received, 16u * 4096);
  // The lost packet carried the only ACK request, so the sender learns nothing until its timer
  // fires. Go-back-N then resends from the first packet until the ACK for the first resend
  // (a duplicate) comes back an RTT (~14 packets) later and moves it to the last one; selective
  // repeat resends the oldest, learns from its ACK that only the last is missing, and resends
  // that on its short tail timer (IRN's RTO_low), without a second full timeout.
  if (GetParam() == Recovery::kGoBackN) {
    EXPECT_EQ(r.requester.timeouts, 1u);
    EXPECT_GE(r.requester.retransmitted_packets, 12u);
    EXPECT_LE(r.requester.retransmitted_packets, 16u);
  } else {
    EXPECT_EQ(r.requester.timeouts, 1u);
    EXPECT_EQ(r.requester.retransmitted_packets, 2u);
    EXPECT_LT(r.elapsed_ns, 2 * config(GetParam()).timeout_ns());
  }
}

TEST_P(TransportTest, LostAcksAreCoveredByLaterAcks) {
  LinkConfig ack_loss;
  ack_loss.loss = 0.3;
  ack_loss.seed = 11;
  const auto r = run_loopback_transfer(config(GetParam()), {}, ack_loss, messages(4, 1 << 20), kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_GT(r.acks_dropped, 0u);
  EXPECT_EQ(r.responder.bytes_received, 4u << 20);
}

TEST_P(TransportTest, RandomLossCompletesAndEveryDropIsRetransmitted) {
  LinkConfig lossy;
  lossy.loss = 0.01;
  lossy.seed = 7;
  const auto r = run_loopback_transfer(config(GetParam()), lossy, {}, messages(16, 1 << 20), 10 * kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_EQ(r.responder.bytes_received, 16u << 20);
  EXPECT_GT(r.data_packets_dropped, 20u);
  EXPECT_GE(r.requester.retransmitted_packets, r.data_packets_dropped);
  if (GetParam() == Recovery::kSelectiveRepeat) {
    // Each loss costs one resend, plus the rare resend that was itself lost or was inferred lost
    // while still in flight.
    EXPECT_LE(r.requester.retransmitted_packets, r.data_packets_dropped * 11 / 10 + 2);
  }
}

TEST_P(TransportTest, OutageShorterThanRetriesStallsThenRecovers) {
  QpConfig c = config(GetParam());
  LinkConfig flap;
  flap.blackhole_start_ns = 50'000;
  flap.blackhole_end_ns = flap.blackhole_start_ns + 2 * c.timeout_ns();  // two attempts lost
  const auto r = run_loopback_transfer(c, flap, {}, messages(1, 64u << 20), 10 * kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_GE(r.requester.timeouts, 2u);
  EXPECT_LE(r.requester.timeouts, 3u);
  EXPECT_GT(r.elapsed_ns, flap.blackhole_end_ns);
  EXPECT_EQ(r.responder.bytes_received, 64u << 20);
}

TEST_P(TransportTest, OutageLongerThanRetriesFailsTheQueuePair) {
  QpConfig c = config(GetParam());
  LinkConfig flap;
  flap.blackhole_start_ns = 50'000;
  flap.blackhole_end_ns = 100 * kSecond;
  const auto r = run_loopback_transfer(c, flap, {}, messages(1, 64u << 20), 100 * kSecond);
  EXPECT_FALSE(r.completed);
  EXPECT_NE(r.failure.find("retry counter exceeded"), std::string::npos) << r.failure;
  // The first attempt and 7 retries, each waiting a full timeout.
  EXPECT_EQ(r.requester.timeouts, 8u);
  EXPECT_GE(r.elapsed_ns, 8 * c.timeout_ns());
}

INSTANTIATE_TEST_SUITE_P(Recoveries, TransportTest,
                         ::testing::Values(Recovery::kGoBackN, Recovery::kSelectiveRepeat),
                         [](const auto& info) {
                           return info.param == Recovery::kGoBackN ? "GoBackN" : "SelectiveRepeat";
                         });

TEST(TransportComparisonTest, SelectiveRepeatBeatsGoBackNUnderHeavyLoss) {
  LinkConfig lossy;
  lossy.loss = 0.05;
  lossy.seed = 3;
  lossy.delay_ns = 10'000;  // a larger bandwidth-delay product, as across a fabric
  const auto gbn = run_loopback_transfer(config(Recovery::kGoBackN), lossy, {}, messages(4, 1 << 20), 100 * kSecond);
  const auto sr = run_loopback_transfer(config(Recovery::kSelectiveRepeat), lossy, {}, messages(4, 1 << 20), 100 * kSecond);
  ASSERT_TRUE(sr.completed) << sr.failure;
  EXPECT_GT(sr.goodput_gbps(), 3 * gbn.goodput_gbps())
      << "sr " << sr.goodput_gbps() << " gbn " << gbn.goodput_gbps();
}

TEST(QpConfigTest, TimeoutFollowsNcclFormula) {
  QpConfig c;
  c.timeout_exponent = 20;
  EXPECT_EQ(c.timeout_ns(), 4096ull << 20);  // about 4.3 s
  c.timeout_scale = 0.001;
  EXPECT_NEAR(static_cast<double>(c.timeout_ns()), 4294967.0, 1.0);
  EXPECT_TRUE(validate(c).ok());
  c.retry_count = 8;
  EXPECT_FALSE(validate(c).ok());
  EXPECT_EQ(*parse_recovery("irn"), Recovery::kSelectiveRepeat);
  EXPECT_FALSE(parse_recovery("magic").ok());
}

}  // namespace
}  // namespace collide::replayer::transport
