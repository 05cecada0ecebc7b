#include <gtest/gtest.h>

#include "replayer/transport/loopback_transfer.h"
#include "tests/support/status_matchers.h"

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
  if (GetParam() == Recovery::kOutOfOrder) {
    // No NAK: the packets that overtook the hole were SACKed until it was older than the
    // reorder window.
    EXPECT_EQ(r.requester.naks, 0u);
    EXPECT_EQ(r.responder.naks_sent, 0u);
    EXPECT_EQ(r.requester.retransmitted_packets, 1u);
  } else if (GetParam() == Recovery::kSelectiveRepeat) {
    EXPECT_GE(r.requester.naks, 1u);
    EXPECT_EQ(r.requester.retransmitted_packets, 1u);
  } else {
    EXPECT_GE(r.requester.naks, 1u);
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
  // repeat (and the out-of-order mode) resends the oldest, learns from its ACK that only the last
  // is missing, and resends that on its short tail timer (IRN's RTO_low), without a second full
  // timeout.
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
  if (GetParam() != Recovery::kGoBackN) {
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

// A message sent whole into an outage (the tail of a ring step, nothing queued behind it): no
// later packet reports the holes. The oldest, resent after the timeout, is acknowledged alone, so
// the rest is resent at once rather than one packet per timeout (256 timeouts here).
TEST_P(TransportTest, AWholeWindowLostAtTheEndIsResentAfterOneTimeout) {
  QpConfig c = config(GetParam());
  LinkConfig outage;
  outage.blackhole_start_ns = 1;
  outage.blackhole_end_ns = c.timeout_ns() / 2;  // 1 MiB takes 84 us at 100 Gb/s: all of it lost
  const auto r = run_loopback_transfer(c, outage, {}, messages(1, 1u << 20), 10 * kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_EQ(r.requester.timeouts, 1u);
  EXPECT_LT(r.elapsed_ns, 2 * c.timeout_ns());
  EXPECT_EQ(r.responder.bytes_received, 1u << 20);
  // Each lost packet resent about once (269 resends of the 256 here: a few twice).
  if (GetParam() != Recovery::kGoBackN) {
    EXPECT_GE(r.requester.retransmitted_packets, 256u);
    EXPECT_LE(r.requester.retransmitted_packets, 256u + 16);
  }
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
                         ::testing::Values(Recovery::kGoBackN, Recovery::kSelectiveRepeat,
                                           Recovery::kOutOfOrder),
                         [](const auto& info) {
                           switch (info.param) {
                             case Recovery::kGoBackN: return "GoBackN";
                             case Recovery::kSelectiveRepeat: return "SelectiveRepeat";
                             case Recovery::kOutOfOrder: return "OutOfOrder";
                           }
                           return "Unknown";
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

// Per-packet spraying: a tenth of the packets take a slower path and arrive up to 8 packets late;
// nothing is lost.
LinkConfig spraying() {
  LinkConfig l;
  l.reorder = 0.1;
  l.reorder_max_packets = 8;
  l.seed = 5;
  return l;
}

TEST(TransportReorderingTest, OutOfOrderModeResendsNothingWhenPacketsAreOnlyReordered) {
  const auto r = run_loopback_transfer(config(Recovery::kOutOfOrder), spraying(), {},
                                       messages(16, 1 << 20), kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_EQ(r.data_packets_dropped, 0u);
  EXPECT_GT(r.responder.out_of_order, 200u) << "the link did reorder";
  EXPECT_EQ(r.requester.retransmitted_packets, 0u);
  EXPECT_EQ(r.requester.naks, 0u);
  EXPECT_EQ(r.requester.timeouts, 0u);
  EXPECT_EQ(r.responder.duplicates, 0u);
  EXPECT_EQ(r.responder.bytes_received, 16u << 20) << "every byte exactly once";
  // As the lossless, in-order transfer: the late packets cost a few serialization times.
  EXPECT_GT(r.goodput_gbps(), 95.0);
}

TEST(TransportReorderingTest, GoBackNCollapsesAndSelectiveRepeatResendsSpuriously) {
  const auto ooo = run_loopback_transfer(config(Recovery::kOutOfOrder), spraying(), {},
                                         messages(16, 1 << 20), kSecond);
  const auto gbn = run_loopback_transfer(config(Recovery::kGoBackN), spraying(), {},
                                         messages(16, 1 << 20), kSecond);
  const auto sr = run_loopback_transfer(config(Recovery::kSelectiveRepeat), spraying(), {},
                                        messages(16, 1 << 20), kSecond);
  ASSERT_TRUE(gbn.completed) << gbn.failure;
  ASSERT_TRUE(sr.completed) << sr.failure;
  const uint64_t packets = 16u << 20 >> 12;
  // Go-back-N takes every overtaken packet for a loss and resends all it sent after it: more
  // packets resent than the transfer has, at a fraction of the goodput.
  EXPECT_GT(gbn.requester.retransmitted_packets, packets) << gbn.requester.retransmitted_packets;
  EXPECT_LT(gbn.goodput_gbps(), 0.5 * ooo.goodput_gbps())
      << "gbn " << gbn.goodput_gbps() << " ooo " << ooo.goodput_gbps();
  // Selective repeat resends each overtaken packet once, for nothing: about one resend per late
  // packet (a tenth of the packets).
  EXPECT_GT(sr.requester.retransmitted_packets, packets / 20) << sr.requester.retransmitted_packets;
  EXPECT_GT(sr.responder.duplicates, packets / 20);
  EXPECT_EQ(ooo.requester.retransmitted_packets, 0u);
}

TEST(TransportReorderingTest, OutOfOrderModeRecoversLossAmidReordering) {
  LinkConfig both = spraying();
  both.loss = 0.01;
  both.seed = 9;
  const auto r = run_loopback_transfer(config(Recovery::kOutOfOrder), both, {},
                                       messages(16, 1 << 20), 10 * kSecond);
  ASSERT_TRUE(r.completed) << r.failure;
  EXPECT_GT(r.data_packets_dropped, 20u);
  EXPECT_EQ(r.responder.bytes_received, 16u << 20) << "every byte exactly once";
  EXPECT_EQ(r.requester.naks, 0u);
  EXPECT_GE(r.requester.retransmitted_packets, r.data_packets_dropped);
  // Reordering makes no resend of its own: each loss costs one, plus the rare lost resend.
  EXPECT_LE(r.requester.retransmitted_packets, r.data_packets_dropped * 11 / 10 + 2);
  EXPECT_EQ(r.requester.timeouts, 0u);
}

Packet data(uint64_t psn, bool last = false) {
  Packet p;
  p.qpn = 0x11;
  p.psn = psn;
  p.payload_bytes = 4096;
  p.opcode = psn == 0 ? wire::Opcode::kWriteFirst
             : last   ? wire::Opcode::kWriteLast
                      : wire::Opcode::kWriteMiddle;
  return p;
}

TEST(OutOfOrderResponderTest, KeepsPacketsPastAHoleAndAcknowledgesThemSelectively) {
  Responder r(0x22, config(Recovery::kOutOfOrder));
  EXPECT_TRUE(r.on_packet(data(0), 0).empty());
  const auto after_2 = r.on_packet(data(2), 1);
  ASSERT_EQ(after_2.size(), 1u);
  EXPECT_EQ(after_2[0].type, PacketType::kSack) << "never a NAK on a gap";
  EXPECT_EQ(after_2[0].psn, 1u) << "the first missing PSN";
  EXPECT_EQ(after_2[0].sack_psn, 2u);
  EXPECT_EQ(after_2[0].sack_bitmap, 0b1u);
  const auto after_4 = r.on_packet(data(4), 2);
  ASSERT_EQ(after_4.size(), 1u);
  EXPECT_EQ(after_4[0].sack_psn, 2u);
  EXPECT_EQ(after_4[0].sack_bitmap, 0b101u);
  // Far beyond the hole, the bitmap ends at the packet that arrived.
  const auto after_100 = r.on_packet(data(100), 3);
  ASSERT_EQ(after_100.size(), 1u);
  EXPECT_EQ(after_100[0].sack_psn, 37u);
  EXPECT_EQ(after_100[0].sack_bitmap, uint64_t{1} << 63);
  // The hole fills: 0..2 are delivered, 3 is now the first missing, 4 and 100 are still held.
  const auto after_1 = r.on_packet(data(1), 4);
  ASSERT_EQ(after_1.size(), 1u);
  EXPECT_EQ(after_1[0].type, PacketType::kSack);
  EXPECT_EQ(after_1[0].psn, 3u);
  EXPECT_EQ(after_1[0].sack_psn, 4u);
  EXPECT_EQ(after_1[0].sack_bitmap, 0b1u);
  EXPECT_EQ(r.expected_psn(), 3u);
  // A packet it holds already is a duplicate.
  EXPECT_EQ(r.on_packet(data(4), 5).size(), 1u);
  EXPECT_EQ(r.counters().out_of_order, 3u);
  EXPECT_EQ(r.counters().duplicates, 1u);
  EXPECT_EQ(r.counters().naks_sent, 0u);
  EXPECT_EQ(r.counters().bytes_received, 3u * 4096);
}

// A requester with ten packets in flight, sent at time 0, told at `at` that 1, 2 and 3 arrived
// while 0 did not.
Requester requester_with_hole(const QpConfig& c, Nanos at) {
  Requester q(0x11, c);
  q.post(10 * 4096, 0);
  while (q.next_packet(0)) {
  }
  Packet sack;
  sack.type = PacketType::kSack;
  sack.psn = 0;
  sack.sack_psn = 1;
  sack.sack_bitmap = 0b111;
  q.on_response(sack, at);
  return q;
}

TEST(OutOfOrderRequesterTest, AHoleIsResentOnlyOnceOlderThanTheReorderWindow) {
  QpConfig c = config(Recovery::kOutOfOrder);
  c.reorder_window_ns = 20'000;
  Requester q = requester_with_hole(c, 1'000);
  EXPECT_FALSE(q.ready_to_send()) << "packets overtaking it are no proof of loss";
  ASSERT_TRUE(q.timer_deadline().has_value());
  EXPECT_EQ(*q.timer_deadline(), 21'000u);
  q.on_timer(20'999);
  EXPECT_FALSE(q.ready_to_send());
  q.on_timer(21'000);
  auto resent = q.next_packet(21'000);
  ASSERT_TRUE(resent.has_value());
  EXPECT_EQ(resent->psn, 0u);
  EXPECT_TRUE(resent->retransmission);
  EXPECT_FALSE(q.next_packet(21'000).has_value()) << "1..3 arrived; 4..9 are not overtaken";
  EXPECT_EQ(q.counters().timeouts, 0u);
  EXPECT_EQ(q.counters().retransmitted_packets, 1u);
}

TEST(OutOfOrderRequesterTest, EnoughLaterPacketsSackedDeclareAHoleLostAtOnce) {
  QpConfig c = config(Recovery::kOutOfOrder);
  c.reorder_packets = 3;
  Requester q = requester_with_hole(c, 1'000);
  auto resent = q.next_packet(1'000);
  ASSERT_TRUE(resent.has_value());
  EXPECT_EQ(resent->psn, 0u);
  c.reorder_packets = 4;
  Requester patient = requester_with_hole(c, 1'000);
  EXPECT_FALSE(patient.next_packet(1'000).has_value());
}

TEST(QpConfigTest, TimeoutFollowsNcclFormula) {
  QpConfig c;
  c.timeout_exponent = 20;
  EXPECT_EQ(c.timeout_ns(), 4096ull << 20);  // about 4.3 s
  c.timeout_scale = 0.001;
  EXPECT_NEAR(static_cast<double>(c.timeout_ns()), 4294967.0, 1.0);
  EXPECT_TRUE(validate(c).ok());
  c.retry_count = 8;
  EXPECT_THAT(validate(c), StatusIs(StatusCode::kInvalidArgument));
  c.retry_count = 7;
  c.reorder_packets = 0;
  EXPECT_THAT(validate(c), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(*parse_recovery("irn"), Recovery::kSelectiveRepeat);
  EXPECT_EQ(*parse_recovery("out-of-order"), Recovery::kOutOfOrder);
  EXPECT_STREQ(recovery_name(Recovery::kOutOfOrder), "out-of-order");
  EXPECT_THAT(parse_recovery("magic"), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::replayer::transport
