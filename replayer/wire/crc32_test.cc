#include "replayer/wire/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

#include "replayer/wire/icrc.h"
#include "replayer/wire/payload_pattern.h"
#include "replayer/wire/roce_frame.h"
#include "tests/support/status_matchers.h"

namespace collide::replayer::wire {
namespace {

uint32_t zlib_crc(std::span<const uint8_t> data, uint32_t start = 0) {
  return static_cast<uint32_t>(crc32(start, data.data(), static_cast<uInt>(data.size())));
}

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t len) {
  std::vector<uint8_t> out(len);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

TEST(Crc32Test, MatchesZlibForEveryShortLengthAndStart) {
  std::mt19937_64 rng(1);
  for (size_t len = 0; len <= 600; ++len) {
    const auto data = random_bytes(rng, len);
    const auto start = static_cast<uint32_t>(rng());
    // (zlib answers 0 for an empty buffer, being asked for its initial value.)
    ASSERT_EQ(crc32_update(start, data), len == 0 ? start : zlib_crc(data, start)) << len;
    ASSERT_EQ(crc32_of(data), zlib_crc(data)) << len;
  }
}

TEST(Crc32Test, ConcatenationAndZerosMatchReadingTheBytes) {
  std::mt19937_64 rng(2);
  // More distinct lengths than the operator cache has slots, revisited, so evictions and hits
  // are both checked.
  for (int round = 0; round < 3; ++round) {
    for (size_t len_b : {1ul, 3ul, 4ul, 64ul, 1000ul, 1024ul, 1027ul, 4096ul, 4100ul, 8192ul,
                         9000ul, 17ul, 33ul, 65ul, 129ul, 257ul, 513ul, 2049ul, 3001ul}) {
      const auto a = random_bytes(rng, rng() % 100);
      const auto b = random_bytes(rng, len_b);
      std::vector<uint8_t> ab(a);
      ab.insert(ab.end(), b.begin(), b.end());
      ASSERT_EQ(crc32_concat(zlib_crc(a), zlib_crc(b), b.size()), zlib_crc(ab)) << len_b;
      const std::vector<uint8_t> zeros(len_b, 0);
      ASSERT_EQ(crc32_of_zeros(len_b), zlib_crc(zeros)) << len_b;
    }
  }
  EXPECT_EQ(crc32_of_zeros(0), 0u);
  EXPECT_EQ(crc32_concat(0x1234, 0, 0), 0x1234u);
}

TEST(Crc32Test, ShiftAppendsAnyBytesOfItsLength) {
  std::mt19937_64 rng(4);
  for (size_t len : {0ul, 1ul, 4ul, 58ul, 1024ul, 4096ul, 9000ul}) {
    const Crc32Shift shift(len);
    EXPECT_EQ(shift.length(), len);
    EXPECT_EQ(shift.zeros_crc(), zlib_crc(std::vector<uint8_t>(len, 0))) << len;
    for (int i = 0; i < 5; ++i) {
      const auto a = random_bytes(rng, rng() % 80);
      const auto b = random_bytes(rng, len);
      std::vector<uint8_t> ab(a);
      ab.insert(ab.end(), b.begin(), b.end());
      ASSERT_EQ(shift.concat(zlib_crc(a), zlib_crc(b)), zlib_crc(ab)) << len;
    }
  }
}

// Changing one byte of a message changes its CRC by that byte's term, whatever the rest holds.
TEST(Crc32Test, ByteTermsGiveTheCrcOfAChangedByte) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    auto m = random_bytes(rng, 1 + rng() % 100);
    const size_t pos = rng() % m.size();
    const auto d = static_cast<uint8_t>(rng());
    const uint32_t before = zlib_crc(m);
    m[pos] ^= d;
    ASSERT_EQ(zlib_crc(m), before ^ crc32_byte_terms(m.size() - 1 - pos)[d]) << i;
  }
}

TEST(PayloadPatternTest, CrcFromTheSeedMatchesReadingThePayload) {
  std::mt19937_64 rng(3);
  // Enough packets per length that the tables get built and used; odd lengths too.
  for (size_t len : {1ul, 7ul, 8ul, 13ul, 1024ul, 1021ul, 4096ul}) {
    std::vector<uint8_t> payload(len);
    for (int i = 0; i < 200; ++i) {
      const uint64_t seed = rng();
      fill_payload_pattern(payload, seed);
      ASSERT_TRUE(payload_matches_pattern(payload, seed));
      ASSERT_EQ(payload_pattern_crc(payload, seed), zlib_crc(payload)) << len << " #" << i;
    }
  }
}

TEST(PayloadPatternTest, CatchesFlippedAndMovedWords) {
  std::vector<uint8_t> payload(256);
  fill_payload_pattern(payload, 42);
  EXPECT_FALSE(payload_matches_pattern(payload, 43));
  for (size_t i = 0; i < payload.size(); i += 37) {
    auto flipped = payload;
    flipped[i] ^= 0x01;
    EXPECT_FALSE(payload_matches_pattern(flipped, 42)) << i;
  }
  auto swapped = payload;
  std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 8);
  EXPECT_FALSE(payload_matches_pattern(swapped, 42));
  // Same position, other packet: the seed is not the only difference between words.
  std::vector<uint8_t> other(256);
  fill_payload_pattern(other, 43);
  std::copy(other.begin() + 64, other.begin() + 72, payload.begin() + 64);
  EXPECT_FALSE(payload_matches_pattern(payload, 42));
}

// Random headers of every shape: the frame written around a payload from its CRC is byte for
// byte the frame written from the payload itself, and its ICRC checks with the reference.
TEST(FinishRoceFrameTest, EqualsTheFullBuilderForRandomHeadersAndSizes) {
  std::mt19937_64 rng(4);
  const Opcode opcodes[] = {Opcode::kWriteFirst, Opcode::kWriteMiddle, Opcode::kWriteLast,
                            Opcode::kWriteOnly,  Opcode::kSendOnly,    Opcode::kAcknowledge,
                            Opcode::kCnp};
  for (int i = 0; i < 2000; ++i) {
    RoceHeaders h;
    for (auto& b : h.endpoints.src_mac.bytes) b = static_cast<uint8_t>(rng());
    for (auto& b : h.endpoints.dst_mac.bytes) b = static_cast<uint8_t>(rng());
    h.endpoints.src_ip.host_order = static_cast<uint32_t>(rng());
    h.endpoints.dst_ip.host_order = static_cast<uint32_t>(rng());
    h.endpoints.udp_src_port = static_cast<uint16_t>(rng());
    h.endpoints.tos = static_cast<uint8_t>(rng());
    h.endpoints.ttl = static_cast<uint8_t>(rng());
    h.bth.opcode = opcodes[rng() % std::size(opcodes)];
    h.bth.solicited = rng() & 1;
    h.bth.pkey = static_cast<uint16_t>(rng());
    h.bth.fecn = rng() & 1;
    h.bth.becn = rng() & 1;
    h.bth.dest_qp = static_cast<uint32_t>(rng()) & 0xffffff;
    h.bth.ack_request = rng() & 1;
    h.bth.psn = static_cast<uint32_t>(rng()) & kMaxPsn;
    if (opcode_has_reth(h.bth.opcode)) {
      h.reth = Reth{rng(), static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())};
    }
    if (opcode_has_aeth(h.bth.opcode)) {
      h.aeth = Aeth{static_cast<uint8_t>(rng()), static_cast<uint32_t>(rng()) & 0xffffff};
    }
    const size_t len = rng() % 3 == 0 ? rng() % 16 : rng() % 4200;
    const auto payload = random_bytes(rng, len);

    std::vector<uint8_t> reference(roce_frame_size(h, len) + 8, 0xee);
    auto ref_len = write_roce_frame(reference, h, payload);
    ASSERT_TRUE(ref_len.ok()) << ref_len.status().to_string();

    std::vector<uint8_t> fast(reference.size(), 0x5a);
    std::copy(payload.begin(), payload.end(), fast.begin() + roce_payload_offset(h));
    auto fast_len = finish_roce_frame(fast, h, len, crc32_of(payload));
    ASSERT_TRUE(fast_len.ok()) << fast_len.status().to_string();
    ASSERT_EQ(*fast_len, *ref_len);
    fast.resize(*fast_len);
    reference.resize(*ref_len);
    ASSERT_EQ(fast, reference) << "case " << i << ", payload " << len;

    auto parsed = parse_roce_frame(fast);
    ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
    EXPECT_TRUE(parsed->icrc_ok());
  }
}

TEST(FinishRoceFrameTest, RefusesWhatTheFullBuilderRefuses) {
  RoceHeaders h;
  h.bth.opcode = Opcode::kWriteFirst;  // needs a RETH
  std::vector<uint8_t> out(256);
  EXPECT_THAT(finish_roce_frame(out, h, 8, 0), StatusIs(StatusCode::kInvalidArgument));
  h.reth = Reth{};
  EXPECT_THAT(finish_roce_frame(out, h, 1024, 0),
              StatusIs(StatusCode::kInvalidArgument));  // does not fit
  EXPECT_TRUE(finish_roce_frame(out, h, 8, 0).ok());
}

// A sender's packets repeat their IP, UDP and first BTH word, and the ICRC reuses the CRC of that
// prefix: interleaved QPs, and QPs that differ only outside the bytes that pick a cache slot
// (source address, P_Key, length), must each still get their own ICRC.
TEST(FinishRoceFrameTest, RepeatedHeadersOfInterleavedQpsStayRight) {
  std::mt19937_64 rng(5);
  std::vector<RoceHeaders> qps;
  for (int q = 0; q < 24; ++q) {
    RoceHeaders h;
    h.endpoints.src_ip.host_order = 0xc6120001u + static_cast<uint32_t>(q % 3);
    h.endpoints.dst_ip.host_order = 0xc6120002u;
    h.bth.opcode = Opcode::kWriteMiddle;
    h.bth.dest_qp = 0x100u + static_cast<uint32_t>(q % 4);  // many share a slot
    h.bth.pkey = q % 2 == 0 ? kDefaultPkey : 0x8001;
    qps.push_back(h);
  }
  for (int i = 0; i < 5000; ++i) {
    RoceHeaders h = qps[rng() % qps.size()];
    h.bth.psn = static_cast<uint32_t>(i) & kMaxPsn;
    h.bth.ack_request = i % 16 == 0;
    if (rng() % 8 == 0) {
      h.bth.opcode = Opcode::kWriteFirst;
      h.reth = Reth{rng(), 0, 1u << 20};
    }
    const size_t len = rng() % 4 == 0 ? 1000 : 1024;
    const auto payload = random_bytes(rng, len);
    std::vector<uint8_t> reference(roce_frame_size(h, len));
    ASSERT_TRUE(write_roce_frame(reference, h, payload).ok());
    std::vector<uint8_t> fast(reference.size());
    std::copy(payload.begin(), payload.end(), fast.begin() + roce_payload_offset(h));
    ASSERT_TRUE(finish_roce_frame(fast, h, len, crc32_of(payload)).ok());
    ASSERT_EQ(fast, reference) << "packet " << i;
  }
}

}  // namespace
}  // namespace collide::replayer::wire
