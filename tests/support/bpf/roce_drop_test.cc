#include "tests/support/bpf/roce_drop.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/pkt_cls.h>

#include <vector>

#include <gtest/gtest.h>

#include "replayer/wire/roce_frame.h"
#include "tests/support/privileged.h"

namespace collide::testing {
namespace {

namespace wire = replayer::wire;

std::vector<uint8_t> frame(wire::Opcode opcode) {
  wire::RoceHeaders h;
  h.bth.opcode = opcode;
  if (wire::opcode_has_reth(opcode)) h.reth = wire::Reth{};
  if (wire::opcode_has_aeth(opcode)) h.aeth = wire::Aeth{};
  std::vector<uint8_t> payload(opcode == wire::Opcode::kAcknowledge ? 0 : 256, 7);
  std::vector<uint8_t> out(wire::roce_frame_size(h, payload.size()));
  EXPECT_TRUE(wire::write_roce_frame(out, h, payload).ok());
  return out;
}

// Runs the program `repeat` times on `f`; returns how many runs said drop.
uint64_t drops(const RoceDrop& d, const std::vector<uint8_t>& f, int repeat) {
  uint64_t dropped = 0;
  const auto before = d.counts();
  LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f.data(),
              .data_size_in = static_cast<uint32_t>(f.size()), .repeat = repeat);
  EXPECT_EQ(bpf_prog_test_run_opts(d.program_fd(), &opts), 0);
  dropped = d.counts()->dropped - before->dropped;
  return dropped;
}

TEST(RoceDropTest, ExactAtZeroAndOneAndNearPInBetween) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto data = frame(wire::Opcode::kWriteMiddle);
  auto none = RoceDrop::load(0.0, 1);
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_EQ(drops(**none, data, 10000), 0u);
  auto all = RoceDrop::load(1.0, 1);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(drops(**all, data, 10000), 10000u);
  // 1% of 10^6: mean 10,000, 3 sigma = 3 x sqrt(10^6 x 0.01 x 0.99) = 298.5.
  auto some = RoceDrop::load(0.01, 7);
  ASSERT_TRUE(some.ok());
  const uint64_t d = drops(**some, data, 1000000);
  EXPECT_GE(d, 10000u - 298);
  EXPECT_LE(d, 10000u + 298);
  EXPECT_EQ((*some)->counts()->matched, 1000000u);
}

TEST(RoceDropTest, TouchesOnlyRoceDataPackets) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  auto all = RoceDrop::load(1.0, 1);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(drops(**all, frame(wire::Opcode::kAcknowledge), 100), 0u);
  EXPECT_EQ(drops(**all, frame(wire::Opcode::kCnp), 100), 0u);
  EXPECT_EQ(drops(**all, frame(wire::Opcode::kWriteFirst), 100), 100u);
  EXPECT_EQ((*all)->counts()->matched, 100u);
  EXPECT_FALSE(RoceDrop::load(1.5, 1).ok());
}

}  // namespace
}  // namespace collide::testing
