#include "replayer/transport/frame_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "replayer/wire/icrc.h"
#include "replayer/wire/roce_frame.h"
#include "tests/support/status_matchers.h"

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

size_t round_trip_size(const Packet& p) {
  std::array<uint8_t, 9200> buf{};
  auto len = encode_frame(buf, p, address(), false);
  return len.ok() ? *len : 0;
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

// A switch queues a frame by its DSCP, so every kind carries the address's: data frames with
// ECT(0) or CE beside it, the others not ECN-capable.
TEST(FrameCodecTest, EveryFrameCarriesTheDscp) {
  FrameAddress a = address();
  a.dscp = 26;
  Packet data;
  data.type = PacketType::kData;
  data.opcode = wire::Opcode::kWriteOnly;
  data.payload_bytes = 64;
  data.message_bytes = 64;
  Packet marked = data;
  marked.ecn_ce = true;
  Packet ack;
  ack.type = PacketType::kAck;
  Packet nak = ack;
  nak.type = PacketType::kNak;
  Packet cnp;
  cnp.type = PacketType::kCnp;
  const std::pair<Packet, uint8_t> cases[] = {
      {data, 26 << 2 | 0x02}, {marked, 26 << 2 | 0x03}, {ack, 26 << 2}, {nak, 26 << 2}, {cnp, 26 << 2}};
  for (const auto& [packet, tos] : cases) {
    std::array<uint8_t, 2048> buf{};
    auto len = encode_frame(buf, packet, a, false);
    ASSERT_THAT(len, IsOk());
    auto parsed = wire::parse_roce_frame({buf.data(), *len});
    ASSERT_THAT(parsed, IsOk());
    EXPECT_EQ(parsed->headers.endpoints.tos, tos) << static_cast<int>(packet.type);
    EXPECT_TRUE(parsed->icrc_ok());
  }
}

TEST(FrameCodecTest, SelectiveAcksCarryTheFirstMissingPsnAndABitmap) {
  Packet sack;
  sack.type = PacketType::kSack;
  sack.qpn = 9;
  sack.psn = (1u << 24) + 40;  // the wire keeps 24 bits of each PSN
  sack.sack_psn = (1u << 24) + 42;
  sack.sack_bitmap = 0x8000'0000'0000'0005ull;
  const DecodedFrame d = round_trip(sack);
  EXPECT_EQ(d.packet.type, PacketType::kSack);
  EXPECT_EQ(d.packet.psn, 40u);
  EXPECT_EQ(d.packet.sack_psn, 42u);
  EXPECT_EQ(d.packet.sack_bitmap, 0x8000'0000'0000'0005ull);
  EXPECT_EQ(sack.wire_bytes(), round_trip_size(sack));

  // A plain ACK stays a plain ACK: the bitmap travels only in selective ACKs.
  Packet ack = sack;
  ack.type = PacketType::kAck;
  EXPECT_EQ(round_trip(ack).packet.type, PacketType::kAck);
  EXPECT_EQ(round_trip(ack).packet.sack_bitmap, 0u);
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
  EXPECT_THAT(decode_frame(junk, false), StatusIs(StatusCode::kInvalidArgument));
  Packet p;
  p.type = PacketType::kData;
  p.message_bytes = uint64_t{1} << 33;
  std::array<uint8_t, 256> buf{};
  EXPECT_THAT(encode_frame(buf, p, address(), false), StatusIs(StatusCode::kInvalidArgument));
}

// Frames from encode_frame, whose ICRC comes from the payload's CRC rather than its bytes, check
// against the reference ICRC over every byte, for random packets of every kind and size.
TEST(FrameCodecTest, FastEncodingValidatesWithTheReferenceIcrc) {
  std::mt19937_64 rng(7);
  const wire::Opcode opcodes[] = {wire::Opcode::kWriteFirst, wire::Opcode::kWriteMiddle,
                                  wire::Opcode::kWriteLast, wire::Opcode::kWriteOnly};
  std::vector<uint8_t> buf(9200);
  for (int i = 0; i < 3000; ++i) {
    Packet p;
    p.type = static_cast<PacketType>(rng() % 5);
    p.qpn = static_cast<uint32_t>(rng()) & 0xffffff;
    p.psn = rng() & 0xffffffffff;
    p.opcode = opcodes[rng() % 4];
    p.payload_bytes = static_cast<uint32_t>(rng() % 3 == 0 ? rng() % 64 : rng() % 9000);
    p.message_bytes = rng() & 0xffffffff;
    p.message_tag = rng();
    p.ack_request = rng() & 1;
    p.ecn_ce = rng() & 1;
    p.sack_psn = rng() & 1 ? rng() & 0xffffff : 0;
    p.sack_bitmap = rng();
    const bool pattern = rng() & 1;
    std::fill(buf.begin(), buf.end(), static_cast<uint8_t>(rng()));
    auto len = encode_frame(buf, p, address(), pattern);
    ASSERT_TRUE(len.ok()) << len.status().to_string();
    const std::span<const uint8_t> frame(buf.data(), *len);
    auto parsed = wire::parse_roce_frame(frame);
    ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
    ASSERT_EQ(parsed->icrc_on_wire,
              wire::compute_icrc(frame.subspan(wire::kEthHeaderSize,
                                               *len - wire::kEthHeaderSize - wire::kIcrcSize)))
        << "packet " << i;
    auto d = decode_frame(frame, pattern);
    ASSERT_TRUE(d.ok());
    EXPECT_TRUE(d->icrc_ok);
    EXPECT_TRUE(d->pattern_ok);
    if (p.type == PacketType::kData && !pattern) {
      EXPECT_TRUE(std::all_of(parsed->payload.begin(), parsed->payload.end(),
                              [](uint8_t b) { return b == 0; }));
    }
  }
}

// The receiver's ICRC check, which takes a proven payload's CRC from its content, agrees with
// the reference ICRC over every byte, for intact frames and frames with one byte changed
// anywhere (headers, payload, pad, ICRC), whether the receiver verifies the pattern or not and
// whatever payload the sender put in.
TEST(FrameCodecTest, ReceiverIcrcCheckAgreesWithTheReference) {
  std::mt19937_64 rng(9);
  std::vector<uint8_t> buf(9200);
  for (int i = 0; i < 4000; ++i) {
    Packet p;
    p.type = rng() % 5 == 0 ? static_cast<PacketType>(rng() % 5) : PacketType::kData;
    p.qpn = static_cast<uint32_t>(rng()) & 0xffffff;
    p.psn = rng() & 0xffffffffff;
    const wire::Opcode opcodes[] = {wire::Opcode::kWriteFirst, wire::Opcode::kWriteMiddle,
                                    wire::Opcode::kWriteLast, wire::Opcode::kWriteOnly};
    p.opcode = opcodes[rng() % 4];
    p.payload_bytes = static_cast<uint32_t>(rng() % 3 == 0 ? rng() % 16 : rng() % 4200);
    p.message_bytes = rng() & 0xffffffff;
    p.sack_psn = rng() % 2 == 0 ? rng() & 0xffffff : 0;
    p.sack_bitmap = rng();
    const bool sent_pattern = rng() % 2 == 0;
    auto len = encode_frame(buf, p, address(), sent_pattern);
    ASSERT_TRUE(len.ok());
    std::span<uint8_t> frame(buf.data(), *len);
    const int what = static_cast<int>(rng() % 3);
    if (what == 1) {
      frame[rng() % frame.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    } else if (what == 2 && p.type == PacketType::kData && p.payload_bytes > 0) {
      // Inside the payload, where the shortcut would skip reading if it were wrong.
      const size_t payload_at = *len - wire::kIcrcSize - ((p.payload_bytes + 3) & ~3u);
      frame[payload_at + rng() % p.payload_bytes] ^= 0x40;
    }
    auto reference = wire::parse_roce_frame(frame);
    for (bool verify : {false, true}) {
      auto d = decode_frame(frame, verify);
      // (A changed opcode or syndrome may make a frame the parser takes one decode refuses.)
      if (!reference.ok()) {
        ASSERT_THAT(d, StatusIs(StatusCode::kInvalidArgument)) << "frame " << i;
      }
      if (!d.ok()) continue;
      ASSERT_EQ(d->icrc_ok, reference->icrc_ok()) << "frame " << i << " verify " << verify;
    }
  }
}

Packet data_packet(wire::Opcode opcode, uint32_t payload, uint64_t psn) {
  Packet p;
  p.type = PacketType::kData;
  p.opcode = opcode;
  p.qpn = 0x21;
  p.psn = psn;
  p.payload_bytes = payload;
  p.message_bytes = 1 << 20;
  return p;
}

// A reused buffer whose memo says it holds the zeros skips rewriting them, and the frame is still
// right; any other memo (unknown, another length, another offset) rewrites them.
TEST(FrameCodecTest, PayloadMemoSkipsOnlyIdenticalZeros) {
  std::vector<uint8_t> buf(4200, 0);
  PayloadMemo memo;
  ASSERT_TRUE(encode_frame(buf, data_packet(wire::Opcode::kWriteMiddle, 1024, 1), address(),
                           false, &memo).ok());
  ASSERT_NE(memo.written, 0u);
  const uint64_t middle_1k = memo.written;

  // Same shape: the memo matches and the frame checks, headers and ICRC new.
  memo.held = memo.written;
  auto len = encode_frame(buf, data_packet(wire::Opcode::kWriteMiddle, 1024, 2), address(),
                          false, &memo);
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(memo.written, middle_1k);
  auto d = decode_frame({buf.data(), *len}, false);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->icrc_ok);
  EXPECT_EQ(d->packet.psn, 2u);

  // Scribbled payload under an unknown memo: rewritten.
  const size_t offset = len.value() - wire::kIcrcSize - 1024;
  std::fill(buf.begin() + static_cast<long>(offset), buf.begin() + static_cast<long>(offset) + 1024,
            0x77);
  memo.held = 0;
  len =
      encode_frame(buf, data_packet(wire::Opcode::kWriteMiddle, 1024, 3), address(), false, &memo);
  ASSERT_TRUE(len.ok());
  d = decode_frame({buf.data(), *len}, false);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->icrc_ok);
  EXPECT_EQ(buf[offset + 512], 0);

  // A FIRST packet puts the payload 16 bytes later (RETH), a shorter one ends earlier: the memo
  // of the 1 KiB MIDDLE must not match either.
  for (const Packet& p : {data_packet(wire::Opcode::kWriteFirst, 1024, 4),
                          data_packet(wire::Opcode::kWriteLast, 1000, 5)}) {
    std::fill(buf.begin(), buf.end(), 0x33);
    memo.held = middle_1k;
    len = encode_frame(buf, p, address(), false, &memo);
    ASSERT_TRUE(len.ok());
    EXPECT_NE(memo.written, middle_1k);
    d = decode_frame({buf.data(), *len}, false);
    ASSERT_TRUE(d.ok());
    EXPECT_TRUE(d->icrc_ok);
  }

  // The pattern is never described: every packet's differs.
  memo.held = middle_1k;
  ASSERT_TRUE(encode_frame(buf, data_packet(wire::Opcode::kWriteMiddle, 1024, 6), address(), true,
                           &memo).ok());
  EXPECT_EQ(memo.written, 0u);
}

}  // namespace
}  // namespace collide::replayer::transport
