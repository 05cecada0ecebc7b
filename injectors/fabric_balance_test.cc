#include "injectors/fabric_balance.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>

#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "replayer/wire/roce_frame.h"
#include "tests/support/privileged.h"

namespace collide::injectors {
namespace {

namespace wire = replayer::wire;

constexpr int kCpu = 0;  // the test thread runs here, so the program's per-CPU state is on it

wire::RoceHeaders headers(uint32_t dest_qp, uint32_t dst_ip, uint16_t src_port, uint32_t psn) {
  wire::RoceHeaders h;
  h.bth.opcode = wire::Opcode::kWriteMiddle;
  h.bth.dest_qp = dest_qp;
  h.bth.psn = psn;
  h.endpoints.src_ip.host_order = 0xc6130101;  // 198.19.1.1
  h.endpoints.dst_ip.host_order = dst_ip;
  h.endpoints.udp_src_port = src_port;
  return h;
}

std::vector<uint8_t> frame(const wire::RoceHeaders& h) {
  std::vector<uint8_t> payload(256, 7);
  std::vector<uint8_t> out(wire::roce_frame_size(h, payload.size()));
  EXPECT_TRUE(wire::write_roce_frame(out, h, payload).ok());
  return out;
}

// The same frame as UDP to another port: not RoCEv2.
std::vector<uint8_t> plain_udp(const wire::RoceHeaders& h) {
  std::vector<uint8_t> f = frame(h);
  const size_t udp_dst = 14 + 20 + 2;
  f[udp_dst] = 0x13;
  f[udp_dst + 1] = 0x88;  // 5000
  return f;
}

void pin_to_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(kCpu, &set);
  ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

// Runs the program once on `f`; the hash it set (0: it set none).
uint32_t hash_of(const FabricBalancer& b, const std::vector<uint8_t>& f) {
  const auto before = b.counts();
  EXPECT_TRUE(before.ok());
  LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f.data(),
              .data_size_in = static_cast<uint32_t>(f.size()), .repeat = 1);
  EXPECT_EQ(bpf_prog_test_run_opts(b.program_fd(), &opts), 0);
  EXPECT_EQ(opts.retval, 0xffffffffu);  // TC_ACT_UNSPEC: the frame's fate is not ours to change
  const auto after = b.counts();
  EXPECT_TRUE(after.ok());
  if (after->rehashed == before->rehashed) return 0;
  auto h = b.last_hash(kCpu);
  EXPECT_TRUE(h.ok());
  return *h;
}

TEST(FabricBalanceTest, QpHashDependsOnlyOnTheDestinationQpAndAddress) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  pin_to_cpu();
  auto b = FabricBalancer::load(Balancing::kQpHash, 42);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  const uint32_t dst = 0xc6130201;
  const uint32_t h = hash_of(**b, frame(headers(0x4101, dst, 0xc001, 1)));
  ASSERT_NE(h, 0u);
  // Another source port, PSN or opcode: the same QP, the same path.
  EXPECT_EQ(hash_of(**b, frame(headers(0x4101, dst, 0xc777, 99))), h);
  auto ack = headers(0x4101, dst, 0xd000, 5);
  ack.bth.opcode = wire::Opcode::kWriteFirst;
  ack.reth = wire::Reth{};
  EXPECT_EQ(hash_of(**b, frame(ack)), h);
  // Another QP, or the same QP number on another destination: another hash.
  EXPECT_NE(hash_of(**b, frame(headers(0x4102, dst, 0xc001, 1))), h);
  EXPECT_NE(hash_of(**b, frame(headers(0x4101, dst + 1, 0xc001, 1))), h);
  // Another seed moves the whole assignment.
  ASSERT_TRUE((*b)->set_mode(Balancing::kQpHash, 43).ok());
  EXPECT_NE(hash_of(**b, frame(headers(0x4101, dst, 0xc001, 1))), h);
}

TEST(FabricBalanceTest, QpHashSpreadsAConnectionsConsecutiveQpsEvenly) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  pin_to_cpu();
  // The kernel gives next hop i of n the i-th n-th of the hash space: 8 QPs over 2 or 4 uplinks,
  // exactly evenly whatever the seed.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto b = FabricBalancer::load(Balancing::kQpHash, seed);
    ASSERT_TRUE(b.ok());
    std::vector<int> halves(2), quarters(4);
    for (uint32_t qp = 0; qp < 8; ++qp) {
      const uint32_t h = hash_of(**b, frame(headers(0x804100 + qp, 0xc6130201, 0xc001, 1)));
      ++halves[h >> 31];
      ++quarters[h >> 30];
    }
    EXPECT_EQ(halves, (std::vector<int>{4, 4})) << "seed " << seed;
    EXPECT_EQ(quarters, (std::vector<int>{2, 2, 2, 2})) << "seed " << seed;
  }
}

TEST(FabricBalanceTest, SprayDrawsPerPacketAndRepeatsWithItsSeed) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  pin_to_cpu();
  auto a = FabricBalancer::load(Balancing::kSpray, 7);
  auto again = FabricBalancer::load(Balancing::kSpray, 7);
  ASSERT_TRUE(a.ok() && again.ok());
  const auto f = frame(headers(0x4101, 0xc6130201, 0xc001, 1));
  std::set<uint32_t> distinct;
  int upper = 0;
  constexpr int kPackets = 2000;
  for (int i = 0; i < kPackets; ++i) {
    const uint32_t h = hash_of(**a, f);
    EXPECT_EQ(hash_of(**again, f), h) << "packet " << i;
    distinct.insert(h);
    upper += static_cast<int>(h >> 31);
  }
  EXPECT_GE(distinct.size(), static_cast<size_t>(kPackets - 2));
  // Two uplinks: binomial(2000, 1/2), 4 sigma = 89.
  EXPECT_NEAR(upper, kPackets / 2, 89);
}

TEST(FabricBalanceTest, LeavesNonRoceFramesAndEcmpModeAlone) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  pin_to_cpu();
  const auto roce = frame(headers(0x4101, 0xc6130201, 0xc001, 1));
  for (Balancing mode : {Balancing::kQpHash, Balancing::kSpray}) {
    auto b = FabricBalancer::load(mode, 3);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(hash_of(**b, plain_udp(headers(0x4101, 0xc6130201, 0xc001, 1))), 0u);
    std::vector<uint8_t> arp(60, 0);
    arp[12] = 0x08;
    arp[13] = 0x06;
    EXPECT_EQ(hash_of(**b, arp), 0u);
    EXPECT_EQ((*b)->counts()->passed, 2u);
    EXPECT_NE(hash_of(**b, roce), 0u);
    // ecmp switches the attached program off without reloading it.
    ASSERT_TRUE((*b)->set_mode(Balancing::kEcmp, 3).ok());
    EXPECT_EQ(hash_of(**b, roce), 0u);
    EXPECT_EQ((*b)->counts()->rehashed, 1u);
    EXPECT_EQ((*b)->counts()->passed, 3u);
  }
}

}  // namespace
}  // namespace collide::injectors
