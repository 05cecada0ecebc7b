#include "replayer/wire/roce_frame.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "replayer/wire/icrc.h"
#include "tests/support/status_matchers.h"

namespace collide::replayer::wire {
namespace {

// A RoCEv2 CNP captured from a Mellanox ConnectX-4 Lx NIC (published in scapy's RoCE tests). Its
// ICRC was computed by the NIC's hardware, so it checks our ICRC against a real implementation.
constexpr std::array<uint8_t, 74> kConnectX4Cnp = {
    0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00,  // Ethernet
    0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61,              // IPv4
    0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,                                      //
    0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,                                      // UDP
    0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,              // BTH
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                                      // CNP pad
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                                      //
    0x82, 0xfd, 0x00, 0x2a};                                                             // ICRC

// A RDMA WRITE ONLY frame laid out by hand from the specification: 02:..:01 -> 02:..:02,
// 198.18.0.1 -> 198.18.0.2, UDP 0xc001 -> 4791, BTH(opcode 0x0a, P_Key 0xffff, QP 0x11, AckReq,
// PSN 5), RETH(VA 0x1000, R_Key 2, length 8), payload "collide!", ICRC left as zeros here.
constexpr std::array<uint8_t, 82> kHandBuiltWrite = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,  // Ethernet
    0x45, 0x00, 0x00, 0x44, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xae, 0x81,              // IPv4
    0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02,                                      //
    0xc0, 0x01, 0x12, 0xb7, 0x00, 0x30, 0x00, 0x00,                                      // UDP
    0x0a, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x05,              // BTH
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x02,              // RETH
    0x00, 0x00, 0x00, 0x08,                                                              //
    'c',  'o',  'l',  'l',  'i',  'd',  'e',  '!',                                       // payload
    0x00, 0x00, 0x00, 0x00};                                                             // ICRC

// The same frame's ICRC input, masked by hand: 8 x 0xff, the IPv4 header with TOS, TTL and
// checksum set to ones, UDP with checksum ones, BTH byte 4 ones, RETH and payload as they are.
constexpr std::array<uint8_t, 8 + 64> kHandMaskedIcrcInput = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,                                      // LRH
    0x45, 0xff, 0x00, 0x44, 0x00, 0x00, 0x40, 0x00, 0xff, 0x11, 0xff, 0xff,              // IPv4
    0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02,                                      //
    0xc0, 0x01, 0x12, 0xb7, 0x00, 0x30, 0xff, 0xff,                                      // UDP
    0x0a, 0x00, 0xff, 0xff, 0xff, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x05,              // BTH
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x02,              // RETH
    0x00, 0x00, 0x00, 0x08,                                                              //
    'c',  'o',  'l',  'l',  'i',  'd',  'e',  '!'};                                      // payload

// CRC-32 as IEEE 802.3 defines it, one bit at a time: reflected polynomial 0xedb88320, initial
// value and final XOR all ones. Independent of the table-driven code under test.
uint32_t reference_crc32(std::span<const uint8_t> data) {
  uint32_t crc = 0xffffffff;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320 & (0u - (crc & 1)));
  }
  return ~crc;
}

RoceHeaders hand_built_headers() {
  RoceHeaders h;
  h.endpoints.src_mac = *MacAddress::parse("02:00:00:00:00:01");
  h.endpoints.dst_mac = *MacAddress::parse("02:00:00:00:00:02");
  h.endpoints.src_ip = *Ipv4Address::parse("198.18.0.1");
  h.endpoints.dst_ip = *Ipv4Address::parse("198.18.0.2");
  h.endpoints.udp_src_port = 0xc001;
  h.bth.opcode = Opcode::kWriteOnly;
  h.bth.dest_qp = 0x11;
  h.bth.ack_request = true;
  h.bth.psn = 5;
  h.reth = Reth{0x1000, 2, 8};
  return h;
}

std::span<const uint8_t> ip_part(std::span<const uint8_t> frame) {
  return frame.subspan(kEthHeaderSize, frame.size() - kEthHeaderSize - kIcrcSize);
}

TEST(IcrcTest, MatchesIcrcComputedByConnectX4Hardware) {
  const uint32_t icrc = compute_icrc(ip_part(kConnectX4Cnp));
  EXPECT_EQ(icrc, 0x2a00fd82u);  // stored little-endian: 82 fd 00 2a
}

TEST(IcrcTest, MatchesBitwiseCrcOverHandMaskedFields) {
  std::array<uint8_t, kHandBuiltWrite.size()> frame = kHandBuiltWrite;
  const uint32_t expected = reference_crc32(kHandMaskedIcrcInput);
  EXPECT_EQ(compute_icrc(ip_part(frame)), expected);
}

TEST(IcrcTest, VariantFieldsDoNotChangeIt) {
  std::vector<uint8_t> frame(kConnectX4Cnp.begin(), kConnectX4Cnp.end());
  const uint32_t before = compute_icrc(ip_part(frame));
  frame[kEthHeaderSize + 1] = 0x03;   // TOS: ECN CE set by a switch
  frame[kEthHeaderSize + 8] = 0x01;   // TTL decremented by routers
  frame[kEthHeaderSize + 10] ^= 0xff; // IPv4 checksum
  frame[kEthHeaderSize + 20 + 6] = 0x12;  // UDP checksum
  frame[kEthHeaderSize + 28 + 4] = 0x80;  // FECN
  EXPECT_EQ(compute_icrc(ip_part(frame)), before);
  frame[kEthHeaderSize + 28 + 7] ^= 1;  // destination QP is invariant
  EXPECT_NE(compute_icrc(ip_part(frame)), before);
}

TEST(RoceFrameTest, BuilderProducesTheHandBuiltFrame) {
  const std::string_view payload = "collide!";
  std::array<uint8_t, 128> out{};
  auto len = write_roce_frame(
      out, hand_built_headers(),
      {reinterpret_cast<const uint8_t*>(payload.data()), payload.size()});
  ASSERT_TRUE(len.ok()) << len.status().to_string();
  ASSERT_EQ(*len, kHandBuiltWrite.size());
  EXPECT_EQ(roce_frame_size(hand_built_headers(), payload.size()), kHandBuiltWrite.size());
  // Everything before the ICRC matches byte for byte; the ICRC is the reference CRC, little-endian.
  for (size_t i = 0; i + kIcrcSize < kHandBuiltWrite.size(); ++i) {
    EXPECT_EQ(out[i], kHandBuiltWrite[i]) << "byte " << i;
  }
  const uint32_t expected = reference_crc32(kHandMaskedIcrcInput);
  const size_t icrc_at = kHandBuiltWrite.size() - kIcrcSize;
  EXPECT_EQ(out[icrc_at], expected & 0xff);
  EXPECT_EQ(out[icrc_at + 1], (expected >> 8) & 0xff);
  EXPECT_EQ(out[icrc_at + 2], (expected >> 16) & 0xff);
  EXPECT_EQ(out[icrc_at + 3], expected >> 24);
}

TEST(RoceFrameTest, ParsesTheConnectX4Cnp) {
  auto parsed = parse_roce_frame(kConnectX4Cnp);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_TRUE(parsed->icrc_ok());
  const RoceHeaders& h = parsed->headers;
  EXPECT_EQ(h.bth.opcode, Opcode::kCnp);
  EXPECT_TRUE(h.bth.becn);
  EXPECT_FALSE(h.bth.fecn);
  EXPECT_EQ(h.bth.dest_qp, 0x118u);
  EXPECT_EQ(h.bth.pkey, 0xffff);
  EXPECT_EQ(h.endpoints.src_ip.to_string(), "10.0.17.1");
  EXPECT_EQ(h.endpoints.dst_ip.to_string(), "10.0.18.1");
  EXPECT_EQ(h.endpoints.tos, 0xc2);
  EXPECT_EQ(parsed->payload.size(), 16u);
}

TEST(RoceFrameTest, RoundTripsEveryFieldAndPadsPayload) {
  RoceHeaders h = hand_built_headers();
  h.bth.opcode = Opcode::kWriteFirst;
  h.bth.psn = kMaxPsn;
  h.bth.dest_qp = 0xabcdef;
  h.bth.solicited = true;
  h.bth.fecn = true;
  h.endpoints.tos = 0x03;
  h.reth = Reth{0x0123456789abcdefull, 0xfeedbeef, 1u << 30};
  const std::array<uint8_t, 5> payload = {1, 2, 3, 4, 5};
  std::array<uint8_t, 256> out{};
  auto len = write_roce_frame(out, h, payload);
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(*len % 2, 0u);

  auto parsed = parse_roce_frame({out.data(), *len});
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_TRUE(parsed->icrc_ok());
  EXPECT_EQ(parsed->headers.bth.pad_count, 3);
  EXPECT_EQ(std::vector<uint8_t>(parsed->payload.begin(), parsed->payload.end()),
            std::vector<uint8_t>(payload.begin(), payload.end()));
  const RoceHeaders& r = parsed->headers;
  EXPECT_EQ(r.bth.opcode, Opcode::kWriteFirst);
  EXPECT_EQ(r.bth.psn, kMaxPsn);
  EXPECT_EQ(r.bth.dest_qp, 0xabcdefu);
  EXPECT_TRUE(r.bth.solicited);
  EXPECT_TRUE(r.bth.fecn);
  EXPECT_TRUE(r.bth.ack_request);
  EXPECT_EQ(r.endpoints.tos, 0x03);
  EXPECT_EQ(r.endpoints.src_mac, h.endpoints.src_mac);
  EXPECT_EQ(r.endpoints.udp_src_port, 0xc001);
  ASSERT_TRUE(r.reth.has_value());
  EXPECT_EQ(r.reth->virtual_address, 0x0123456789abcdefull);
  EXPECT_EQ(r.reth->rkey, 0xfeedbeefu);
  EXPECT_EQ(r.reth->dma_length, 1u << 30);
  EXPECT_FALSE(r.aeth.has_value());
}

TEST(RoceFrameTest, AckCarriesAeth) {
  RoceHeaders h = hand_built_headers();
  h.bth.opcode = Opcode::kAcknowledge;
  h.reth.reset();
  h.aeth = Aeth{0x60, 0x123456};  // NAK: PSN sequence error
  std::array<uint8_t, 128> out{};
  auto len = write_roce_frame(out, h, {});
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(*len, kEthHeaderSize + kIpv4HeaderSize + kUdpHeaderSize + kBthSize + kAethSize +
                      kIcrcSize);
  auto parsed = parse_roce_frame({out.data(), *len});
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(parsed->headers.aeth.has_value());
  EXPECT_EQ(parsed->headers.aeth->syndrome, 0x60);
  EXPECT_EQ(parsed->headers.aeth->msn, 0x123456u);
}

TEST(RoceFrameTest, DetectsCorruptedPayload) {
  const std::array<uint8_t, 64> payload{};
  std::array<uint8_t, 256> out{};
  auto len = write_roce_frame(out, hand_built_headers(), payload);
  ASSERT_TRUE(len.ok());
  out[*len - kIcrcSize - 10] ^= 0x04;
  auto parsed = parse_roce_frame({out.data(), *len});
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->icrc_ok());
}

TEST(RoceFrameTest, RejectsBadInput) {
  std::array<uint8_t, 16> small{};
  const std::array<uint8_t, 64> payload{};
  EXPECT_EQ(write_roce_frame(small, hand_built_headers(), payload).status().code(),
            StatusCode::kInvalidArgument);

  RoceHeaders no_reth = hand_built_headers();
  no_reth.reth.reset();
  std::array<uint8_t, 256> out{};
  EXPECT_THAT(write_roce_frame(out, no_reth, payload), StatusIs(StatusCode::kInvalidArgument));

  EXPECT_THAT(parse_roce_frame(std::span<const uint8_t>(kConnectX4Cnp).first(40)),
              StatusIs(StatusCode::kInvalidArgument));
  std::array<uint8_t, 74> not_roce = kConnectX4Cnp;
  not_roce[kEthHeaderSize + 20 + 3] = 0xb8;  // UDP 4792
  EXPECT_THAT(parse_roce_frame(not_roce), StatusIs(StatusCode::kInvalidArgument));
  std::array<uint8_t, 74> bad_len = kConnectX4Cnp;
  bad_len[kEthHeaderSize + 2] = 0x7f;  // IPv4 total length past the frame
  EXPECT_THAT(parse_roce_frame(bad_len), StatusIs(StatusCode::kInvalidArgument));
}

TEST(AddressTest, ParsesAndRejects) {
  EXPECT_EQ(MacAddress::parse("E4:1D:2D:AB:2B:C2")->to_string(), "e4:1d:2d:ab:2b:c2");
  EXPECT_THAT(MacAddress::parse("e4:1d:2d:ab:2b"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(MacAddress::parse("e4:1d:2d:ab:2b:c2:00"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(MacAddress::parse("zz:1d:2d:ab:2b:c2"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(Ipv4Address::parse("198.18.0.2")->host_order, 0xc6120002u);
  EXPECT_THAT(Ipv4Address::parse("198.18.0"), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::replayer::wire
