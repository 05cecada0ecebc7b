// The AF_PACKET port between two namespaces joined by a veth pair: frames arrive whole and in
// order, a port does not hear itself, idle waits sleep, and bad interfaces are named.
#include "replayer/backend/af_packet_port.h"

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide::replayer::backend {
namespace {

using testing::TestNetns;

struct Pair {
  std::unique_ptr<TestNetns> a, b;
  std::unique_ptr<AfPacketPort> port_a, port_b;
};

Status open_pair(Pair& p) {
  auto a = TestNetns::create("afp-a");
  auto b = TestNetns::create("afp-b");
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  p.a = std::move(a).value();
  p.b = std::move(b).value();
  COLLIDE_RETURN_IF_ERROR(testing::create_veth_pair(*p.a, "va", *p.b, "vb"));
  COLLIDE_RETURN_IF_ERROR(testing::configure_interface(*p.a, "va", "198.18.9.1/24"));
  COLLIDE_RETURN_IF_ERROR(testing::configure_interface(*p.b, "vb", "198.18.9.2/24"));
  for (auto [ns, name, port] : {std::tuple{p.a.get(), "va", &p.port_a},
                                std::tuple{p.b.get(), "vb", &p.port_b}}) {
    auto scope = testing::NetnsScope::enter(ns->name());
    if (!scope.ok()) return scope.status();
    AfPacketConfig config;
    config.interface = name;
    config.max_frame_bytes = 1514;
    auto opened = AfPacketPort::open(config);
    if (!opened.ok()) return opened.status();
    *port = std::move(opened).value();
  }
  return {};
}

// An Ethernet frame to `dst` with an ethertype no stack handles, numbered in its payload.
void build(Frame& f, const wire::MacAddress& src, const wire::MacAddress& dst, uint32_t n,
           uint32_t len) {
  std::copy(dst.bytes.begin(), dst.bytes.end(), f.data);
  std::copy(src.bytes.begin(), src.bytes.end(), f.data + 6);
  f.data[12] = 0x88;  // IEEE 802 local experimental ethertype
  f.data[13] = 0xb5;
  for (uint32_t i = 14; i < len; ++i) f.data[i] = static_cast<uint8_t>(n * 7 + i);
  f.data[14] = static_cast<uint8_t>(n >> 8);
  f.data[15] = static_cast<uint8_t>(n);
  f.len = len;
}

class AfPacketPortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_netns());
    COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
    const Status s = open_pair(pair_);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  Pair pair_;
};

TEST_F(AfPacketPortTest, FramesCrossTheVethWholeAndInOrder) {
  AfPacketPort& a = *pair_.port_a;
  AfPacketPort& b = *pair_.port_b;
  constexpr uint32_t kFrames = 3000;
  uint32_t sent = 0, received = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::vector<Frame> rx(64);
  while (received < kFrames && std::chrono::steady_clock::now() < deadline) {
    if (sent < kFrames) {
      std::vector<Frame> tx(std::min<uint32_t>(32, kFrames - sent));
      ASSERT_TRUE(a.acquire(tx).ok());
      for (size_t i = 0; i < tx.size(); ++i) build(tx[i], a.mac(), b.mac(), sent + static_cast<uint32_t>(i), 60 + (sent + i) % 1400);
      const uint16_t taken = a.submit(tx);
      a.release(std::span<Frame>(tx).subspan(taken));
      sent += taken;
    }
    const uint16_t n = b.receive(rx);
    for (uint16_t i = 0; i < n; ++i) {
      ASSERT_EQ(rx[i].len, 60 + received % 1400) << "frame " << received;
      const uint32_t number = (uint32_t{rx[i].data[14]} << 8) | rx[i].data[15];
      ASSERT_EQ(number, received & 0xffff);
      for (uint32_t j = 16; j < rx[i].len; ++j) {
        ASSERT_EQ(rx[i].data[j], static_cast<uint8_t>(received * 7 + j)) << "frame " << received;
      }
      ++received;
    }
    b.release(std::span<Frame>(rx).first(n));
    if (n == 0 && sent == kFrames) b.wait_for_frames(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(received, kFrames);
  // A port does not hear its own frames.
  EXPECT_EQ(a.receive(rx), 0);
  EXPECT_EQ(a.counters().tx_frames, kFrames);
  EXPECT_EQ(b.counters().rx_frames, kFrames);
  EXPECT_EQ(b.counters().rx_dropped, 0u);
}

TEST_F(AfPacketPortTest, AnIdleWaitSleepsAndAFrameEndsIt) {
  AfPacketPort& a = *pair_.port_a;
  AfPacketPort& b = *pair_.port_b;
  auto t0 = std::chrono::steady_clock::now();
  b.wait_for_frames(std::chrono::milliseconds(30));
  const auto idle = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(idle, std::chrono::milliseconds(29));
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<Frame> tx(1);
    ASSERT_TRUE(a.acquire(tx).ok());
    build(tx[0], a.mac(), b.mac(), 1, 100);
    EXPECT_EQ(a.submit(tx), 1);
  });
  t0 = std::chrono::steady_clock::now();
  b.wait_for_frames(std::chrono::seconds(5));
  const auto woke = std::chrono::steady_clock::now() - t0;
  sender.join();
  EXPECT_LT(woke, std::chrono::seconds(1));
  std::vector<Frame> rx(4);
  EXPECT_EQ(b.receive(rx), 1);
  b.release(std::span<Frame>(rx).first(1));
}

TEST_F(AfPacketPortTest, BuffersRunOutAndComeBack) {
  AfPacketPort& a = *pair_.port_a;
  std::vector<Frame> all(4096);
  ASSERT_TRUE(a.acquire(all).ok());
  std::vector<Frame> one(1);
  EXPECT_FALSE(a.acquire(one).ok());
  a.release(all);
  EXPECT_TRUE(a.acquire(one).ok());
  a.release(one);
}

TEST(AfPacketPortOpenTest, AMissingInterfaceIsNamed) {
  COLLIDE_REQUIRE(testing::missing_root());
  AfPacketConfig config;
  config.interface = "no-such-if0";
  auto port = AfPacketPort::open(config);
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("no-such-if0"), std::string::npos);
}

}  // namespace
}  // namespace collide::replayer::backend
