#include "tests/support/bpf/port_counter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/pkt_cls.h>

#include <array>
#include <vector>

#include <gtest/gtest.h>

#include "replayer/wire/roce_frame.h"
#include "tests/support/privileged.h"

namespace collide::testing {
namespace {

namespace wire = replayer::wire;

constexpr uint32_t kLoopbackIfindex = 1;  // test runs put the packet on the namespace's lo

std::vector<uint8_t> roce_frame(size_t payload_len) {
  wire::RoceHeaders h;
  h.endpoints.src_ip = *wire::Ipv4Address::parse("198.18.0.1");
  h.endpoints.dst_ip = *wire::Ipv4Address::parse("198.18.0.2");
  h.bth.opcode = wire::Opcode::kWriteMiddle;
  std::vector<uint8_t> payload(payload_len, 0x5a);
  std::vector<uint8_t> frame(wire::roce_frame_size(h, payload_len));
  EXPECT_TRUE(wire::write_roce_frame(frame, h, payload).ok());
  return frame;
}

// Ethernet / IPv4 / TCP to port 443, laid out by hand.
std::vector<uint8_t> tcp_frame() {
  std::vector<uint8_t> f(14 + 20 + 20, 0);
  f[12] = 0x08;               // IPv4
  f[14] = 0x45;               // version, IHL
  f[14 + 3] = 40;             // total length
  f[14 + 9] = 6;              // TCP
  f[14 + 20 + 2] = 0x01;      // destination port 443
  f[14 + 20 + 3] = 0xbb;
  return f;
}

// Ethernet / ARP: not IP, counted under protocol 0.
std::vector<uint8_t> arp_frame() {
  std::vector<uint8_t> f(14 + 28, 0);
  f[12] = 0x08;
  f[13] = 0x06;
  return f;
}

class PortCounterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(collide::testing::missing_bpf());
    auto loaded = PortCounter::load();
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    counter_ = std::move(loaded).value();
  }

  // Runs the program `repeat` times on one frame, as the kernel would on a hook.
  void run(injectors::Direction direction, const std::vector<uint8_t>& frame, int repeat = 1) {
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(),
                .data_size_in = static_cast<uint32_t>(frame.size()), .repeat = repeat);
    ASSERT_EQ(bpf_prog_test_run_opts(counter_->program_fd(direction), &opts), 0);
    EXPECT_EQ(static_cast<int>(opts.retval), TC_ACT_UNSPEC) << "the counter must not decide";
  }

  PortCount read(injectors::Direction direction, uint8_t proto, uint16_t port) {
    auto count = counter_->read({kLoopbackIfindex, direction, proto, port});
    EXPECT_TRUE(count.ok()) << count.status().to_string();
    return count.ok() ? *count : PortCount{};
  }

  std::unique_ptr<PortCounter> counter_;
};

TEST_F(PortCounterTest, CountsRoceFramesExactly) {
  const auto frame = roce_frame(1024);
  run(injectors::Direction::kIngress, frame, 1000);
  const PortCount c = read(injectors::Direction::kIngress, 17, wire::kRoceUdpPort);
  EXPECT_EQ(c.packets, 1000u);
  EXPECT_EQ(c.bytes, 1000u * frame.size());
}

TEST_F(PortCounterTest, SeparatesDirectionsProtocolsAndPorts) {
  run(injectors::Direction::kIngress, roce_frame(64), 3);
  run(injectors::Direction::kEgress, roce_frame(64), 5);
  run(injectors::Direction::kIngress, tcp_frame(), 7);
  run(injectors::Direction::kIngress, arp_frame(), 2);

  EXPECT_EQ(read(injectors::Direction::kIngress, 17, 4791).packets, 3u);
  EXPECT_EQ(read(injectors::Direction::kEgress, 17, 4791).packets, 5u);
  EXPECT_EQ(read(injectors::Direction::kIngress, 6, 443).packets, 7u);
  EXPECT_EQ(read(injectors::Direction::kIngress, 0, 0).packets, 2u);
  EXPECT_EQ(read(injectors::Direction::kEgress, 6, 443).packets, 0u);

  auto all = counter_->read_all();
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  uint64_t total = 0;
  for (const PortCount& c : *all) total += c.packets;
  EXPECT_EQ(all->size(), 4u);
  EXPECT_EQ(total, 17u);
}

TEST_F(PortCounterTest, TruncatedFramesCountWithoutPorts) {
  auto frame = roce_frame(64);
  frame.resize(14 + 20 + 2);  // IPv4 header, then the UDP header cut short
  frame[14 + 3] = static_cast<uint8_t>(frame.size() - 14);
  run(injectors::Direction::kIngress, frame);
  EXPECT_EQ(read(injectors::Direction::kIngress, 17, 0).packets, 1u);
}

}  // namespace
}  // namespace collide::testing
