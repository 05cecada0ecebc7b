#include "replayer/wire/data_frame_template.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

#include "replayer/wire/icrc.h"
#include "tests/support/status_matchers.h"

namespace collide::replayer::wire {
namespace {

constexpr Opcode kWrites[] = {Opcode::kWriteFirst, Opcode::kWriteMiddle, Opcode::kWriteLast,
                              Opcode::kWriteOnly};

Endpoints random_endpoints(std::mt19937_64& rng) {
  Endpoints ep;
  for (auto& b : ep.src_mac.bytes) b = static_cast<uint8_t>(rng());
  for (auto& b : ep.dst_mac.bytes) b = static_cast<uint8_t>(rng());
  ep.src_ip.host_order = static_cast<uint32_t>(rng());
  ep.dst_ip.host_order = static_cast<uint32_t>(rng());
  ep.udp_src_port = static_cast<uint16_t>(rng());
  ep.ttl = static_cast<uint8_t>(rng());
  ep.tos = static_cast<uint8_t>(rng());
  return ep;
}

// PSNs that matter most: near the 24-bit wrap, at it, and anywhere above it.
uint32_t random_psn(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return static_cast<uint32_t>(kMaxPsn - rng() % 4);
    case 1: return static_cast<uint32_t>(rng() % 4);
    case 2: return static_cast<uint32_t>(rng());  // bits above 24 must not leak onto the wire
    default: return static_cast<uint32_t>(rng() & kMaxPsn);
  }
}

// What write_roce_frame builds for the same fields, payload as given.
std::vector<uint8_t> reference_frame(const Endpoints& ep, uint32_t qpn, const DataFrameFields& f,
                                     std::span<const uint8_t> payload) {
  RoceHeaders h;
  h.endpoints = ep;
  h.endpoints.tos = f.tos;
  h.bth.opcode = f.opcode;
  h.bth.dest_qp = qpn & 0xffffff;
  h.bth.ack_request = f.ack_request;
  h.bth.psn = f.psn & kMaxPsn;
  if (opcode_has_reth(f.opcode)) h.reth = Reth{f.reth_address, 0, f.reth_length};
  std::vector<uint8_t> out(roce_frame_size(h, payload.size()));
  auto len = write_roce_frame(out, h, payload);
  EXPECT_TRUE(len.ok()) << len.status().to_string();
  return out;
}

// Checks a frame against the reference ICRC over every byte and the IPv4 checksum.
void expect_valid(std::span<const uint8_t> frame) {
  const auto ip = frame.subspan(kEthHeaderSize);
  EXPECT_EQ(ipv4_header_checksum(ip.first(kIpv4HeaderSize)), 0) << "IPv4 checksum";
  EXPECT_EQ(bytes::load_le32(frame.data() + frame.size() - kIcrcSize),
            compute_icrc(ip.first(ip.size() - kIcrcSize)))
      << "ICRC";
}

// Every frame the template writes is the frame the generic builder writes, for random addresses,
// QPs, opcodes, PSNs (the wrap included), AckReq, TOS, RETHs and payload sizes (every pad).
TEST(DataFrameTemplateTest, FinishEqualsTheGenericBuilder) {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 40; ++t) {
    const Endpoints ep = random_endpoints(rng);
    const auto qpn = static_cast<uint32_t>(rng());
    const uint32_t mtu = (rng() % 2 == 0 ? 1024 : 4096);
    const DataFrameTemplate tmpl(ep, qpn, mtu);
    for (int i = 0; i < 100; ++i) {
      DataFrameFields f;
      f.opcode = kWrites[rng() % 4];
      f.ack_request = rng() % 2 == 0;
      f.psn = random_psn(rng);
      f.tos = rng() % 3 == 0 ? static_cast<uint8_t>(rng()) : ep.tos;
      f.payload_len = static_cast<uint32_t>(rng() % 3 == 0 ? mtu : rng() % 5000);
      f.reth_address = rng();
      f.reth_length = static_cast<uint32_t>(rng());
      std::vector<uint8_t> payload(f.payload_len);
      for (auto& b : payload) b = static_cast<uint8_t>(rng());
      const auto expected = reference_frame(ep, qpn, f, payload);

      std::vector<uint8_t> out(expected.size() + rng() % 8, 0xa5);
      std::copy(payload.begin(), payload.end(),
                out.begin() + static_cast<long>(DataFrameTemplate::payload_offset(f.opcode)));
      const auto payload_crc =
          static_cast<uint32_t>(crc32(0, payload.data(), static_cast<uInt>(payload.size())));
      auto len = tmpl.finish(out, f, payload_crc);
      ASSERT_TRUE(len.ok()) << len.status().to_string();
      ASSERT_EQ(*len, expected.size());
      out.resize(*len);
      ASSERT_EQ(out, expected) << "template " << t << " frame " << i;
      expect_valid(out);
    }
  }
}

// The prebuilt path for MIDDLE and LAST frames of the typical size writes what finish writes.
TEST(DataFrameTemplateTest, TypicalFramesEqualFinish) {
  std::mt19937_64 rng(12);
  for (uint32_t mtu : {256u, 1024u, 4096u}) {
    const Endpoints ep = random_endpoints(rng);
    const auto qpn = static_cast<uint32_t>(rng());
    const DataFrameTemplate tmpl(ep, qpn, mtu);
    for (int i = 0; i < 400; ++i) {
      const Opcode op = rng() % 2 == 0 ? Opcode::kWriteMiddle : Opcode::kWriteLast;
      ASSERT_TRUE(tmpl.is_typical(op, mtu, ep.tos, mtu + 100));
      const bool ack = rng() % 2 == 0;
      const uint32_t psn = random_psn(rng);
      std::vector<uint8_t> payload(mtu);
      for (auto& b : payload) b = static_cast<uint8_t>(rng());
      const auto crc = static_cast<uint32_t>(crc32(0, payload.data(), mtu));
      // Different garbage in each: neither path may leave any of it in the frame.
      std::vector<uint8_t> a(mtu + 100, 0x11);
      std::vector<uint8_t> b(mtu + 100, 0x22);
      const auto offset = static_cast<long>(DataFrameTemplate::payload_offset(op));
      std::copy(payload.begin(), payload.end(), a.begin() + offset);
      std::copy(payload.begin(), payload.end(), b.begin() + offset);
      const size_t len = tmpl.write_typical(a.data(), op, ack, psn, crc);
      DataFrameFields f;
      f.opcode = op;
      f.ack_request = ack;
      f.psn = psn;
      f.tos = ep.tos;
      f.payload_len = mtu;
      auto expected_len = tmpl.finish(b, f, crc);
      ASSERT_TRUE(expected_len.ok());
      ASSERT_EQ(len, *expected_len);
      a.resize(len);
      b.resize(len);
      ASSERT_EQ(a, b) << "mtu " << mtu << " psn " << psn;
      expect_valid({a.data(), len});
    }
  }
}

TEST(DataFrameTemplateTest, TypicalOnlyForMiddleAndLastOfTheTypicalSize) {
  Endpoints ep;
  ep.tos = 0x02;
  const DataFrameTemplate tmpl(ep, 7, 1024);
  EXPECT_TRUE(tmpl.is_typical(Opcode::kWriteMiddle, 1024, 0x02, 1082));
  EXPECT_FALSE(tmpl.is_typical(Opcode::kWriteMiddle, 1024, 0x02, 1081));  // does not fit
  EXPECT_FALSE(tmpl.is_typical(Opcode::kWriteFirst, 1024, 0x02, 4096));   // RETH
  EXPECT_FALSE(tmpl.is_typical(Opcode::kWriteOnly, 1024, 0x02, 4096));
  EXPECT_FALSE(tmpl.is_typical(Opcode::kWriteLast, 1000, 0x02, 4096));  // another length
  EXPECT_FALSE(tmpl.is_typical(Opcode::kWriteLast, 1024, 0x03, 4096));  // CE-marked
  // No typical size, or one that needs a pad: nothing is typical, not even empty payloads.
  const DataFrameTemplate none(ep, 7, 0);
  EXPECT_FALSE(none.is_typical(Opcode::kWriteMiddle, 0, 0x02, 4096));
  const DataFrameTemplate padded(ep, 7, 1023);
  EXPECT_FALSE(padded.is_typical(Opcode::kWriteMiddle, 1023, 0x02, 4096));
}

TEST(DataFrameTemplateTest, RefusesOtherOpcodesAndShortBuffers) {
  const DataFrameTemplate tmpl(Endpoints{}, 7, 1024);
  std::vector<uint8_t> out(2000);
  DataFrameFields f;
  f.payload_len = 1024;
  for (Opcode op : {Opcode::kSendOnly, Opcode::kAcknowledge, Opcode::kWriteOnlyImm,
                    Opcode::kCnp}) {
    f.opcode = op;
    EXPECT_THAT(tmpl.finish(out, f, 0), StatusIs(StatusCode::kInvalidArgument))
        << static_cast<int>(op);
  }
  f.opcode = Opcode::kWriteMiddle;
  EXPECT_TRUE(tmpl.finish(std::span<uint8_t>(out).first(54 + 1024 + 4), f, 0).ok());
  EXPECT_THAT(tmpl.finish(std::span<uint8_t>(out).first(54 + 1024 + 3), f, 0),
              StatusIs(StatusCode::kInvalidArgument));
  f.payload_len = 70000;  // larger than an IPv4 packet
  std::vector<uint8_t> big(80000);
  EXPECT_THAT(tmpl.finish(big, f, 0), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::replayer::wire
