#include "replayer/transport/frame_codec.h"

#include <array>

#include <gtest/gtest.h>

namespace collide::replayer::transport {
namespace {

FrameAddress address() {
  FrameAddress a;
  a.src_mac = *wire::MacAddress::parse("02:00:00:00:00:01");
  a.dst_mac = *wire::MacAddress::parse("02:00:00:00:00:02");
  a.src_ip = *wire::Ipv4Address::parse("198.18.0.1");
  a.dst_ip = *wire::Ipv4Address::parse("198.18.0.2");
  a.udp_src_port = 0xc123;
  return a;
}

DecodedFrame round_trip(const Packet& p, bool pattern = true) {
  std::array<uint8_t, 9200> buf{};
  auto len = encode_frame(buf, p, address(), pattern);
  EXPECT_TRUE(len.ok()) << len.status().to_string();
  auto d = decode_frame({buf.data(), len.ok() ? *len : 0}, pattern);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_TRUE(d->icrc_ok);
  return d.ok() ? *d : DecodedFrame{};
}

TEST(FrameCodecTest, DataPacketsCarryTagLengthAndPattern) {
  Packet p;
  p.type = PacketType::kData;
  p.opcode = wire::Opcode::kWriteFirst;
  p.qpn = 0x4101;
  p.psn = (uint64_t{3} << 24) + 77;  // unwrapped PSNs go out as their low 24 bits
  p.payload_bytes = 4096;
  p.message_bytes = 1 << 20;
  p.message_tag = 0x0123456789abcdefull;
  p.ack_request = true;
  const DecodedFrame d = round_trip(p);
  EXPECT_EQ(d.packet.type, PacketType::kData);
  EXPECT_EQ(d.packet.opcode, wire::Opcode::kWriteFirst);
  EXPECT_EQ(d.packet.qpn, 0x4101u);
  EXPECT_EQ(d.packet.psn, 77u);
  EXPECT_EQ(unwrap_psn(static_cast<uint32_t>(d.packet.psn), p.psn - 5), p.psn);
  EXPECT_EQ(d.packet.payload_bytes, 4096u);
  EXPECT_EQ(d.packet.message_bytes, 1u << 20);
  EXPECT_EQ(d.packet.message_tag, p.message_tag);
  EXPECT_TRUE(d.packet.ack_request);
  EXPECT_FALSE(d.packet.ecn_ce);
  EXPECT_TRUE(d.pattern_ok);
  EXPECT_EQ(d.src_ip.to_string(), "198.18.0.1");

  p.opcode = wire::Opcode::kWriteMiddle;
  p.ecn_ce = true;
  const DecodedFrame m = round_trip(p);
  EXPECT_EQ(m.packet.message_tag, 0u);  // no RETH in the middle of a message
  EXPECT_TRUE(m.packet.ecn_ce);
}

TEST(FrameCodecTest, PatternCatchesMisplacedPayload) {
  Packet p;
  p.type = PacketType::kData;
  p.opcode = wire::Opcode::kWriteMiddle;
  p.qpn = 9;
  p.psn = 1000;
  p.payload_bytes = 1024;
  std::array<uint8_t, 2048> buf{};
  auto len = encode_frame(buf, p, address(), true);
  ASSERT_TRUE(len.ok());
  // Rewrite the PSN (and so the ICRC input): the payload no longer matches its PSN's pattern.
  buf[14 + 20 + 8 + 11] ^= 1;
  auto d = decode_frame({buf.data(), *len}, true);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->icrc_ok);
  EXPECT_FALSE(d->pattern_ok);
}

TEST(FrameCodecTest, AcksNaksAndCnps) {
  Packet ack;
  ack.type = PacketType::kAck;
  ack.qpn = 5;
  ack.psn = 1234;
  EXPECT_EQ(round_trip(ack).packet.type, PacketType::kAck);
  EXPECT_EQ(round_trip(ack).packet.psn, 1234u);

  Packet nak = ack;
  nak.type = PacketType::kNak;
  nak.sack_psn = 1300;
  const DecodedFrame n = round_trip(nak);
  EXPECT_EQ(n.packet.type, PacketType::kNak);
  EXPECT_EQ(n.packet.sack_psn, 1300u);

  Packet cnp;
  cnp.type = PacketType::kCnp;
  cnp.qpn = 77;
  const DecodedFrame c = round_trip(cnp);
  EXPECT_EQ(c.packet.type, PacketType::kCnp);
  EXPECT_EQ(c.packet.qpn, 77u);
}

TEST(FrameCodecTest, PatternDiffersPerPacketAndPosition) {
  std::array<uint8_t, 37> a{}, b{};  // an odd length exercises the tail
  fill_payload_pattern(a, 1, 100);
  fill_payload_pattern(b, 1, 101);
  EXPECT_NE(a, b);
  EXPECT_TRUE(payload_matches_pattern(a, 1, 100));
  EXPECT_FALSE(payload_matches_pattern(a, 2, 100));
  a[36] ^= 0x10;
  EXPECT_FALSE(payload_matches_pattern(a, 1, 100));
  std::array<uint8_t, 16> words{};
  fill_payload_pattern(words, 3, 3);
  EXPECT_NE(std::vector<uint8_t>(words.begin(), words.begin() + 8),
            std::vector<uint8_t>(words.begin() + 8, words.end()));
}

TEST(FrameCodecTest, UnwrapsAcrossTheWrap) {
  const uint64_t ref = (uint64_t{1} << 24) - 3;  // just before the first wrap
  EXPECT_EQ(unwrap_psn(2, ref), (uint64_t{1} << 24) + 2);
  EXPECT_EQ(unwrap_psn(0xfffff0, (uint64_t{1} << 24) + 5), 0xfffff0u);
  EXPECT_EQ(unwrap_psn(10, 0), 10u);
  EXPECT_EQ(unwrap_psn(0xffffff, 0), 0xffffffu);  // never below zero
}

TEST(FrameCodecTest, RejectsForeignFrames) {
  std::array<uint8_t, 64> junk{};
  EXPECT_FALSE(decode_frame(junk, false).ok());
  Packet p;
  p.type = PacketType::kData;
  p.message_bytes = uint64_t{1} << 33;
  std::array<uint8_t, 256> buf{};
  EXPECT_FALSE(encode_frame(buf, p, address(), false).ok());
}

}  // namespace
}  // namespace collide::replayer::transport
