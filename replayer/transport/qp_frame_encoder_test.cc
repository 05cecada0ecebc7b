// The fast transmit path against the general one: QpFrameEncoder against encode_frame, and
// Requester::next_packets against next_packet, and frames of a whole stream across the PSN wrap
// against the reference ICRC.
#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "replayer/transport/frame_codec.h"
#include "replayer/transport/requester.h"
#include "replayer/wire/icrc.h"
#include "replayer/wire/roce_frame.h"

namespace collide::replayer::transport {
namespace {

constexpr wire::Opcode kWrites[] = {wire::Opcode::kWriteFirst, wire::Opcode::kWriteMiddle,
                                    wire::Opcode::kWriteLast, wire::Opcode::kWriteOnly};

FrameAddress address() {
  FrameAddress a;
  a.src_mac = *wire::MacAddress::parse("02:00:00:00:00:01");
  a.dst_mac = *wire::MacAddress::parse("02:00:00:00:00:02");
  a.src_ip = *wire::Ipv4Address::parse("198.18.0.1");
  a.dst_ip = *wire::Ipv4Address::parse("198.18.0.2");
  a.udp_src_port = 0xc321;
  a.dscp = 26;  // both paths must write it
  return a;
}

// Parses a frame back and checks the ICRC over every byte with the reference function, and the
// IPv4 header checksum.
void expect_valid_frame(std::span<const uint8_t> frame, const Packet& p, bool pattern) {
  auto parsed = wire::parse_roce_frame(frame);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  const auto ip = frame.subspan(wire::kEthHeaderSize);
  EXPECT_EQ(parsed->icrc_on_wire, wire::compute_icrc(ip.first(ip.size() - wire::kIcrcSize)));
  EXPECT_EQ(wire::ipv4_header_checksum(ip.first(wire::kIpv4HeaderSize)), 0);
  auto d = decode_frame(frame, pattern);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->icrc_ok);
  EXPECT_TRUE(d->pattern_ok);
  EXPECT_EQ(d->packet.psn, p.psn & wire::kMaxPsn);
  EXPECT_EQ(d->packet.opcode, p.opcode);
  EXPECT_EQ(d->packet.ack_request, p.ack_request);
  EXPECT_EQ(d->packet.payload_bytes, p.payload_bytes);
}

// Byte for byte what encode_frame writes, the same length or error, and the same memo, for
// random packets of every kind (some for another QP), sizes around the MTU, PSNs at the wrap,
// both payload kinds, and buffers that do or do not already hold the zeros.
TEST(QpFrameEncoderTest, EqualsEncodeFrame) {
  std::mt19937_64 rng(21);
  for (uint32_t mtu : {256u, 1024u, 4096u}) {
    const uint32_t qpn = static_cast<uint32_t>(rng()) & 0xffffff;
    const QpFrameEncoder encoder(address(), qpn, mtu);
    for (int i = 0; i < 3000; ++i) {
      Packet p;
      p.type = rng() % 4 == 0 ? static_cast<PacketType>(rng() % 4) : PacketType::kData;
      p.qpn = rng() % 8 == 0 ? static_cast<uint32_t>(rng()) & 0xffffff : qpn;
      p.opcode = kWrites[rng() % 4];
      p.psn = (rng() % 4 << 24) + (rng() % 2 == 0 ? wire::kMaxPsn - rng() % 3 : rng() % 3);
      if (rng() % 3 == 0) p.psn = rng() & 0xffffffffff;
      p.payload_bytes = rng() % 2 == 0 ? mtu : static_cast<uint32_t>(rng() % (mtu + 8));
      p.message_bytes = rng() % 50 == 0 ? uint64_t{1} << 33 : rng() & 0xffffffff;
      p.message_tag = rng();
      p.ack_request = rng() % 2 == 0;
      p.ecn_ce = rng() % 8 == 0;
      p.sack_psn = rng() % 2 == 0 ? rng() & 0xffffff : 0;
      const bool pattern = rng() % 4 == 0;
      const size_t capacity = rng() % 10 == 0 ? rng() % (mtu + 80) : mtu + 80 + rng() % 64;

      // Both buffers start equal: garbage, or the zeros an earlier frame of this shape left.
      std::vector<uint8_t> a(capacity, static_cast<uint8_t>(rng()));
      PayloadMemo memo_a;
      if (rng() % 2 == 0 && capacity > 0) {
        Packet earlier = p;
        earlier.type = PacketType::kData;
        earlier.psn = rng();
        PayloadMemo first;
        if (encode_frame(a, earlier, encoder.address(), false, &first).ok()) {
          memo_a.held = first.written;
        }
      }
      if (rng() % 8 == 0) memo_a.held = rng();  // a memo of something else
      std::vector<uint8_t> b = a;
      PayloadMemo memo_b = memo_a;

      auto expected = encode_frame(a, p, encoder.address(), pattern, &memo_a);
      auto got = encoder.encode(b, p, pattern, &memo_b);
      ASSERT_EQ(got.ok(), expected.ok()) << "packet " << i << ": "
                                         << expected.status().to_string();
      ASSERT_EQ(memo_b.written, memo_a.written) << "packet " << i;
      if (!expected.ok()) continue;
      ASSERT_EQ(*got, *expected) << "packet " << i;
      ASSERT_EQ(a, b) << "mtu " << mtu << " packet " << i;
      if (p.type == PacketType::kData) {
        expect_valid_frame({b.data(), *got}, p, pattern);
      }
    }
  }
}

// A requester's stream through the encoder, across the 24-bit PSN wrap: every frame of every
// opcode checks against the reference ICRC, and the PSNs on the wire wrap to zero.
TEST(QpFrameEncoderTest, StreamAcrossThePsnWrapValidates) {
  QpConfig config;
  config.mtu = 256;
  config.max_outstanding = 1u << 30;
  Requester requester(0x123456, config);
  const QpFrameEncoder encoder(address(), 0x123456, config.mtu);
  // One message that ends a few packets before the wrap, then messages of every shape.
  const uint64_t before_wrap = (uint64_t{1} << 24) - 5;
  requester.post(before_wrap * config.mtu - 100, 0, 1);
  for (uint64_t bytes : {0ul, 1ul, 255ul, 256ul, 257ul, 512ul, 3000ul, 4096ul}) {
    requester.post(bytes, 0, bytes + 2);
  }
  std::vector<Packet> packets(4096);
  uint64_t skipped = 0;
  while (skipped + packets.size() < before_wrap - 3) {
    skipped += requester.next_packets(0, packets);
  }
  std::vector<uint8_t> buf(config.mtu + 100);
  std::vector<wire::Opcode> seen;
  bool wrapped = false;
  for (size_t n; (n = requester.next_packets(0, std::span<Packet>(packets).first(7))) > 0;) {
    for (size_t i = 0; i < n; ++i) {
      const Packet& p = packets[i];
      for (bool pattern : {false, true}) {
        PayloadMemo memo;
        auto len = encoder.encode(buf, p, pattern, &memo);
        ASSERT_TRUE(len.ok()) << len.status().to_string();
        expect_valid_frame({buf.data(), *len}, p, pattern);
      }
      seen.push_back(p.opcode);
      wrapped |= (p.psn & wire::kMaxPsn) < 16 && p.psn > wire::kMaxPsn;
    }
  }
  EXPECT_TRUE(wrapped);
  for (wire::Opcode op : kWrites) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), op), seen.end()) << static_cast<int>(op);
  }
}

void expect_same_packet(const Packet& a, const Packet& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.qpn, b.qpn);
  EXPECT_EQ(a.psn, b.psn);
  EXPECT_EQ(a.opcode, b.opcode);
  EXPECT_EQ(a.payload_bytes, b.payload_bytes);
  EXPECT_EQ(a.message_seq, b.message_seq);
  EXPECT_EQ(a.message_tag, b.message_tag);
  EXPECT_EQ(a.message_bytes, b.message_bytes);
  EXPECT_EQ(a.message_offset, b.message_offset);
  EXPECT_EQ(a.ack_request, b.ack_request);
  EXPECT_EQ(a.retransmission, b.retransmission);
}

// next_packets gives what as many next_packet calls give, and leaves the requester in the same
// state (counters, RTT probe, timer), through windows, ACKs, NAKs and timeouts of both recovery
// modes.
TEST(RequesterBurstTest, EqualsOneByOne) {
  for (Recovery recovery : {Recovery::kGoBackN, Recovery::kSelectiveRepeat}) {
    std::mt19937_64 rng(recovery == Recovery::kGoBackN ? 31 : 32);
    QpConfig config;
    config.mtu = 1024;
    config.ack_every = 5;
    config.max_outstanding = 64;
    config.recovery = recovery;
    config.timeout_exponent = 4;
    config.retry_count = 7;
    Requester one(77, config);
    Requester burst(77, config);
    Nanos now = 0;
    std::vector<Packet> out(40);
    for (int step = 0; step < 3000 && !one.failed(); ++step) {
      now += rng() % 5000;
      switch (rng() % 6) {
        case 0: {
          const uint64_t bytes = rng() % 3 == 0 ? rng() % 3000 : rng() % 200000;
          const uint64_t tag = rng();
          ASSERT_EQ(one.post(bytes, now, tag), burst.post(bytes, now, tag));
          break;
        }
        case 1:
        case 2: {
          const size_t want = 1 + rng() % out.size();
          const size_t n = burst.next_packets(now, std::span<Packet>(out).first(want));
          size_t m = 0;
          for (; m < want; ++m) {
            auto p = one.next_packet(now);
            if (!p) break;
            ASSERT_LT(m, n) << "step " << step;
            expect_same_packet(*p, out[m]);
          }
          ASSERT_EQ(m, n) << "step " << step;
          break;
        }
        case 3:
        case 4: {
          // An ACK or NAK for something sent (unwrapped PSNs, as the engine hands them over).
          const uint64_t sent = one.counters().packets_sent;
          if (sent == 0) break;
          Packet r;
          r.type = rng() % 3 == 0 ? PacketType::kNak : PacketType::kAck;
          r.psn = one.acked_psn() + rng() % 20;
          if (r.type == PacketType::kNak && recovery == Recovery::kSelectiveRepeat) {
            r.sack_psn = r.psn + 1 + rng() % 10;
          }
          one.on_response(r, now);
          burst.on_response(r, now);
          break;
        }
        default:
          if (auto deadline = one.timer_deadline()) {
            now = std::max(now, *deadline);
            one.on_timer(now);
            burst.on_timer(now);
          }
          break;
      }
      ASSERT_EQ(one.acked_psn(), burst.acked_psn());
      ASSERT_EQ(one.timer_deadline(), burst.timer_deadline()) << "step " << step;
      ASSERT_EQ(one.smoothed_rtt_ns(), burst.smoothed_rtt_ns()) << "step " << step;
      ASSERT_EQ(one.counters().packets_sent, burst.counters().packets_sent);
      ASSERT_EQ(one.counters().bytes_sent, burst.counters().bytes_sent);
      ASSERT_EQ(one.counters().retransmitted_packets, burst.counters().retransmitted_packets);
      ASSERT_EQ(one.failed(), burst.failed());
      ASSERT_EQ(one.take_completions().size(), burst.take_completions().size());
    }
    EXPECT_GT(one.counters().retransmitted_packets, 0u);
  }
}

}  // namespace
}  // namespace collide::replayer::transport
