// A switch port's PFC side on a veth pair between two namespaces the test makes: a held queue keeps
// its frames (backlog grows, nothing dropped, at most one frame passes), a release drains them at
// once with no new traffic, qdisc_stats() agrees with `tc -s -j qdisc show`, a PFC frame sent
// past a held queue arrives at the peer's port with what it carried, a port without a tbf is
// refused, not given one, and a port with a queue per priority holds the lossless priority's
// frames alone while the others go on.
#include "orchestrator/testbed/switch_port_io.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide::testing {
namespace {

namespace tb = orchestrator::testbed;
namespace wire = replayer::wire;
using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The test's traffic: a local experimental EtherType, so neither kernel answers it.
constexpr uint16_t kTestEtherType = 0x88B6;
constexpr size_t kFrameBytes = 1000;
constexpr uint32_t kMtu = 1500;
constexpr uint32_t kRootHandle = 0x10000;  // "1:"

// A packet socket in `ns` on `ifname` for `protocol` (kTestEtherType unless said): receiving
// (bound to the port) or sending.
int test_socket(const TestNetns& ns, int ifindex, uint16_t protocol = kTestEtherType) {
  auto scope = NetnsScope::enter(ns.name());
  if (!scope.ok()) return -1;
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(protocol));
  if (fd < 0) return -1;
  sockaddr_ll at{};
  at.sll_family = AF_PACKET;
  at.sll_protocol = htons(protocol);
  at.sll_ifindex = ifindex;
  if (bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Two namespaces joined by a veth pair; a0's egress has the root tbf of a profiled 100 Mbit/s port.
class SwitchPortIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(missing_netns());
    COLLIDE_REQUIRE(missing_tool("tc"));
    auto a = TestNetns::create("spioa");
    auto b = TestNetns::create("spiob");
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = std::move(a).value();
    b_ = std::move(b).value();
    ASSERT_TRUE(create_veth_pair(*a_, "a0", *b_, "b0").ok());
    ASSERT_TRUE(configure_interface(*a_, "a0", "10.79.0.1/24").ok());
    ASSERT_TRUE(configure_interface(*b_, "b0", "10.79.0.2/24").ok());
    auto a0 = interface_index(*a_, "a0");
    auto b0 = interface_index(*b_, "b0");
    ASSERT_TRUE(a0.ok() && b0.ok());
    a0_ = *a0;
    b0_ = *b0;
    ASSERT_TRUE(shape_port(1'000'000).ok());
    auto io = open_in(*a_);
    ASSERT_TRUE(io.ok()) << io.status().to_string();
    io_ = std::move(io).value();
    send_fd_ = test_socket(*a_, a0_);
    receive_fd_ = test_socket(*b_, b0_);
    ASSERT_GE(send_fd_, 0);
    ASSERT_GE(receive_fd_, 0);
  }
  void TearDown() override {
    io_.reset();
    for (int fd : {send_fd_, receive_fd_, ip_receive_fd_}) {
      if (fd >= 0) close(fd);
    }
    a_.reset();
    b_.reset();
  }

  // `lossless_priority`: a queue per priority, as on a fabric with PFC settings.
  Status shape_port(uint64_t buffer_bytes, std::optional<uint32_t> lossless_priority = std::nullopt) {
    queue_ = tb::PortQueue{.tier = tb::kTierLeafUp, .gbps = 0.1, .profiled = true, .buffer_bytes = buffer_bytes};
    queue_.lossless_priority = lossless_priority;
    gate_ = tb::pause_gate(queue_, kMtu);
    // A testbed's ports start with no qdisc; the root tbf SetUp gave a0 is another kind at 1:.
    if (lossless_priority) COLLIDE_RETURN_IF_ERROR(run_checked({"tc", "-n", a_->name(), "qdisc", "del", "dev", "a0", "root"}));
    return tb::apply_port_queue(a_->name(), "a0", queue_, kMtu);
  }

  static Result<std::unique_ptr<tb::SwitchPortIo>> open_in(const TestNetns& ns) {
    auto scope = NetnsScope::enter(ns.name());
    if (!scope.ok()) return scope.status();
    return tb::SwitchPortIo::open();
  }

  // Sends `count` frames out of a0; returns how many a full queue refused (ENOBUFS, a drop).
  int send_frames(int count) {
    std::array<uint8_t, kFrameBytes> frame{};
    std::fill(frame.begin(), frame.begin() + 6, 0xff);
    frame[12] = kTestEtherType >> 8;
    frame[13] = kTestEtherType & 0xff;
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = a0_;
    to.sll_protocol = htons(kTestEtherType);
    int refused = 0;
    for (int i = 0; i < count; ++i) {
      const ssize_t sent =
          sendto(send_fd_, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
      if (sent < 0 && errno == ENOBUFS) {
        ++refused;
        continue;
      }
      EXPECT_EQ(sent, static_cast<ssize_t>(frame.size())) << "frame " << i << ": " << std::strerror(errno);
    }
    return refused;
  }

  // Sends `count` IPv4 frames of kFrameBytes with TOS `tos` out of a0 (UDP to b0; the queues read
  // only the TOS, so no checksum is needed); false if one could not be sent.
  bool send_ip_frames(int count, uint8_t tos) {
    std::array<uint8_t, kFrameBytes> frame{};
    std::fill(frame.begin(), frame.begin() + 6, 0xff);
    frame[12] = ETH_P_IP >> 8;
    frame[13] = ETH_P_IP & 0xff;
    uint8_t* ip = frame.data() + ETH_HLEN;
    ip[0] = 0x45;
    ip[1] = tos;
    const uint16_t total = kFrameBytes - ETH_HLEN;
    ip[2] = total >> 8;
    ip[3] = total & 0xff;
    ip[8] = 64;
    ip[9] = IPPROTO_UDP;
    const uint8_t addresses[] = {10, 79, 0, 1, 10, 79, 0, 2};
    std::memcpy(ip + 12, addresses, sizeof(addresses));
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = a0_;
    to.sll_protocol = htons(ETH_P_IP);  // skb->protocol, which the port's filter matches
    for (int i = 0; i < count; ++i) {
      if (sendto(send_fd_, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) !=
          static_cast<ssize_t>(frame.size())) {
        ADD_FAILURE() << "IPv4 frame " << i << ": " << std::strerror(errno);
        return false;
      }
    }
    return true;
  }

  // IPv4 frames that reached b0 since the last call, by TOS.
  std::map<uint8_t, int> received_ip() {
    std::map<uint8_t, int> by_tos;
    std::array<uint8_t, 2048> frame{};
    for (;;) {
      const ssize_t n = recv(ip_receive_fd_, frame.data(), frame.size(), MSG_DONTWAIT);
      if (n <= 0) break;
      if (n > ETH_HLEN + 1) ++by_tos[frame[ETH_HLEN + 1]];
    }
    return by_tos;
  }

  // Frames of the test that reached b0 since the last call.
  int received() {
    int n = 0;
    std::array<uint8_t, 2048> frame{};
    while (recv(receive_fd_, frame.data(), frame.size(), MSG_DONTWAIT) > 0) ++n;
    return n;
  }

  // The qdisc `handle` of a0 (its root by default).
  tb::QdiscCounters a0_stats(uint32_t handle = kRootHandle) {
    auto stats = io_->qdisc_stats();
    EXPECT_TRUE(stats.ok()) << stats.status().to_string();
    if (!stats.ok()) return {};
    for (const auto& s : *stats) {
      if (s.ifindex == a0_ && s.handle == handle) return s;
    }
    ADD_FAILURE() << fmt::format("no qdisc {:x}: on a0", handle >> 16);
    return {};
  }

  std::unique_ptr<TestNetns> a_, b_;
  int a0_ = 0, b0_ = 0;
  tb::PortQueue queue_;
  tb::PauseGate gate_;
  std::unique_ptr<tb::SwitchPortIo> io_;
  int send_fd_ = -1, receive_fd_ = -1;
  int ip_receive_fd_ = -1;  // IPv4 frames at b0 (two-queue test)
};

TEST_F(SwitchPortIoTest, HeldQueueKeepsItsFramesAndReleaseDrainsThemWithoutNewTraffic) {
  constexpr int kFrames = 50;  // 50 kB, well inside the 1 MB buffer
  const auto hold_called = Clock::now();
  ASSERT_TRUE(io_->hold(a0_, gate_).ok());
  const auto hold_took = Clock::now() - hold_called;
  ASSERT_EQ(send_frames(kFrames), 0);
  std::this_thread::sleep_for(50ms);
  const int passed = received();
  EXPECT_LE(passed, 1) << "a held queue lets at most one frame through";
  const tb::QdiscCounters held = a0_stats();
  EXPECT_EQ(held.kind, "tbf");
  EXPECT_EQ(held.drops, 0u);
  EXPECT_EQ(held.qlen, static_cast<uint64_t>(kFrames - passed));
  EXPECT_EQ(held.backlog_bytes, (kFrames - passed) * kFrameBytes);

  // Held for a while longer: still nothing leaves.
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(received(), 0);
  EXPECT_EQ(a0_stats().qlen, held.qlen);

  const auto released_at = Clock::now();
  ASSERT_TRUE(io_->release(a0_, gate_).ok());
  const auto release_took = Clock::now() - released_at;
  int drained = 0;
  Clock::duration first{}, last{};
  while (drained < kFrames - passed && Clock::now() - released_at < 2s) {
    const int n = received();
    if (n > 0 && drained == 0) first = Clock::now() - released_at;
    drained += n;
    if (n > 0) last = Clock::now() - released_at;
  }
  const auto us = [](Clock::duration d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); };
  std::printf("release: first held frame after %ld us, all %d after %ld us (%zu bytes at 100 Mbit/s: %.0f us)\n",
              static_cast<long>(us(first)), drained, static_cast<long>(us(last)), drained * kFrameBytes,
              drained * kFrameBytes * 8 / 100.0);
  std::printf("hold() took %ld us, release() %ld us\n", static_cast<long>(us(hold_took)),
              static_cast<long>(us(release_took)));
  EXPECT_EQ(drained, kFrames - passed);
  EXPECT_LT(first, 5ms) << "the released queue should start sending at once";
  const tb::QdiscCounters after = a0_stats();
  EXPECT_EQ(after.qlen, 0u);
  EXPECT_EQ(after.drops, 0u);
}

TEST_F(SwitchPortIoTest, HeldQueueDropsBeyondItsLimitAndQdiscStatsMatchTc) {
  ASSERT_TRUE(shape_port(20'000).ok());  // 20 frames of the test
  ASSERT_TRUE(io_->hold(a0_, gate_).ok());
  const int refused = send_frames(50);
  std::this_thread::sleep_for(20ms);
  auto stats = io_->qdisc_stats();
  ASSERT_TRUE(stats.ok()) << stats.status().to_string();
  auto shown = run_command({"tc", "-n", a_->name(), "-s", "-j", "qdisc", "show"});
  ASSERT_TRUE(shown.ok() && shown->exit_code == 0);
  const json tc = json::parse(shown->output);
  auto index = interface_index(*a_, "lo");
  ASSERT_TRUE(index.ok());
  int compared = 0;
  for (const json& q : tc) {
    const int ifindex = q.at("dev") == "a0" ? a0_ : *index;
    // tc names a handle "1:" (hex major, minor 0).
    const std::string handle = q.at("handle").get<std::string>();
    const uint32_t major = static_cast<uint32_t>(std::stoul(handle.substr(0, handle.find(':')), nullptr, 16));
    const auto ours = std::find_if(stats->begin(), stats->end(), [&](const tb::QdiscCounters& s) {
      return s.ifindex == ifindex && s.handle == major << 16;
    });
    ASSERT_NE(ours, stats->end()) << q.dump();
    EXPECT_EQ(ours->kind, q.at("kind").get<std::string>());
    EXPECT_EQ(ours->bytes, q.at("bytes").get<uint64_t>()) << q.dump();
    EXPECT_EQ(ours->packets, q.at("packets").get<uint64_t>());
    EXPECT_EQ(ours->drops, q.at("drops").get<uint64_t>());
    EXPECT_EQ(ours->backlog_bytes, q.at("backlog").get<uint64_t>());
    EXPECT_EQ(ours->qlen, q.at("qlen").get<uint64_t>());
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(stats->size())) << "qdisc_stats() gives every qdisc tc shows, and only those";
  const tb::QdiscCounters a0 = a0_stats();
  EXPECT_EQ(a0.backlog_bytes + (a0.packets + a0.drops) * kFrameBytes, 50 * kFrameBytes)
      << "each frame is queued, sent or dropped";
  EXPECT_GE(a0.drops, 29u);
  EXPECT_EQ(a0.drops, static_cast<uint64_t>(refused));
  EXPECT_LE(a0.backlog_bytes, 20'000u);
}

// With a queue per priority a pause holds RoCE's alone: frames of DSCP 26 (priority 3) wait behind
// the gate while best-effort frames keep leaving; a release drains the held ones at once.
TEST_F(SwitchPortIoTest, PortWithAQueuePerPriorityHoldsOnlyTheLosslessOne) {
  const Status shaped = shape_port(1'000'000, 3);
  ASSERT_TRUE(shaped.ok()) << shaped.to_string();
  ip_receive_fd_ = test_socket(*b_, b0_, ETH_P_IP);
  ASSERT_GE(ip_receive_fd_, 0);
  constexpr uint8_t kRoce = 26 << 2 | 0x02, kBestEffort = 0;
  constexpr int kFrames = 30;
  const Status held = io_->hold(a0_, gate_);
  ASSERT_TRUE(held.ok()) << held.to_string();
  ASSERT_TRUE(send_ip_frames(kFrames, kRoce));
  ASSERT_TRUE(send_ip_frames(kFrames, kBestEffort));
  std::map<uint8_t, int> got;
  for (const auto start = Clock::now(); got[kBestEffort] < kFrames && Clock::now() - start < 2s;) {
    for (const auto& [tos, n] : received_ip()) got[tos] += n;
  }
  std::this_thread::sleep_for(20ms);
  for (const auto& [tos, n] : received_ip()) got[tos] += n;
  EXPECT_EQ(got[kBestEffort], kFrames) << "the other queue is not held";
  EXPECT_LE(got[kRoce], 1) << "a held gate lets at most one frame through";
  const tb::QdiscCounters gate = a0_stats(gate_.handle);
  EXPECT_EQ(gate.kind, "tbf");
  EXPECT_EQ(gate.qlen, static_cast<uint64_t>(kFrames - got[kRoce]));
  EXPECT_EQ(a0_stats().kind, "htb");
  EXPECT_EQ(a0_stats().drops, 0u);

  const auto released_at = Clock::now();
  ASSERT_TRUE(io_->release(a0_, gate_).ok());
  int drained = 0;
  Clock::duration first{};
  while (got[kRoce] + drained < kFrames && Clock::now() - released_at < 2s) {
    const int n = received_ip()[kRoce];
    if (n > 0 && drained == 0) first = Clock::now() - released_at;
    drained += n;
  }
  EXPECT_EQ(got[kRoce] + drained, kFrames);
  EXPECT_LT(first, 5ms) << "the released queue should start sending at once";
  EXPECT_EQ(a0_stats(gate_.handle).qlen, 0u);
}

TEST_F(SwitchPortIoTest, PfcFrameSkipsAHeldQueueAndArrivesWithItsPortPrioritiesAndQuanta) {
  auto peer = open_in(*b_);
  ASSERT_TRUE(peer.ok()) << peer.status().to_string();
  ASSERT_TRUE(io_->hold(a0_, gate_).ok());
  ASSERT_EQ(send_frames(20), 0);
  std::this_thread::sleep_for(10ms);
  const uint64_t backlog = a0_stats().backlog_bytes;
  EXPECT_GE(backlog, 19 * kFrameBytes);

  wire::PauseFrame pause;
  pause.source = wire::MacAddress{{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}};
  pause.enabled = (1 << 3) | (1 << 5);
  pause.quanta[3] = 0xffff;
  pause.quanta[5] = 1234;
  const auto sent_at = Clock::now();
  ASSERT_TRUE(io_->send_pfc(a0_, pause).ok());
  pollfd p{.fd = (*peer)->pause_fd(), .events = POLLIN, .revents = 0};
  ASSERT_EQ(poll(&p, 1, 1000), 1) << "no pause frame reached b0";
  const auto arrived = Clock::now() - sent_at;
  auto pauses = (*peer)->receive_pauses();
  ASSERT_TRUE(pauses.ok()) << pauses.status().to_string();
  ASSERT_EQ(pauses->size(), 1u);
  const tb::ReceivedPause& got = pauses->front();
  std::printf("PFC frame past a held queue of %lu bytes: readable at b0 after %ld us\n",
              static_cast<unsigned long>(backlog),
              static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(arrived).count()));
  EXPECT_EQ(got.ifindex, b0_);
  EXPECT_EQ(got.frame.source, pause.source);
  EXPECT_EQ(got.frame.enabled, pause.enabled);
  EXPECT_EQ(got.frame.quanta, pause.quanta);
  EXPECT_FALSE(got.frame.link_pause);
  EXPECT_GT(got.at_ns, 0);
  EXPECT_LT(arrived, 100ms);
  // Still held: the frame went beside the queue, not through it.
  EXPECT_EQ(a0_stats().backlog_bytes, backlog);
  // The sender's own frame is not a pause for it.
  auto own = io_->receive_pauses();
  ASSERT_TRUE(own.ok());
  EXPECT_TRUE(own->empty());
}

TEST_F(SwitchPortIoTest, HoldingAPortWithoutATbfFailsAndCreatesNone) {
  auto lo = interface_index(*a_, "lo");
  ASSERT_TRUE(lo.ok());
  const Status held = io_->hold(*lo, gate_);
  EXPECT_FALSE(held.ok());
  EXPECT_NE(held.message().find(fmt::format("ifindex {}", *lo)), std::string::npos) << held.to_string();
  EXPECT_FALSE(io_->release(*lo, gate_).ok());
  auto stats = io_->qdisc_stats();
  ASSERT_TRUE(stats.ok());
  const auto on_lo = std::find_if(stats->begin(), stats->end(),
                                  [&](const tb::QdiscCounters& s) { return s.ifindex == *lo; });
  ASSERT_NE(on_lo, stats->end());
  EXPECT_EQ(on_lo->kind, "noqueue");
}

TEST_F(SwitchPortIoTest, QdiscStatsOfTenShapedPortsIsCheap) {
  for (int i = 1; i <= 10; ++i) {
    const std::string here = fmt::format("a{}", i), there = fmt::format("b{}", i);
    ASSERT_TRUE(create_veth_pair(*a_, here, *b_, there).ok());
    ASSERT_TRUE(a_->exec({"ip", "link", "set", here, "up"}).ok());
    ASSERT_TRUE(tb::apply_port_queue(a_->name(), here, queue_, kMtu).ok());
  }
  constexpr int kRounds = 2000;
  const auto start = Clock::now();
  size_t tbf = 0;
  for (int i = 0; i < kRounds; ++i) {
    auto stats = io_->qdisc_stats();
    ASSERT_TRUE(stats.ok()) << stats.status().to_string();
    tbf = std::count_if(stats->begin(), stats->end(), [](const tb::QdiscCounters& s) { return s.kind == "tbf"; });
  }
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kRounds;
  std::printf("qdisc_stats() over %zu tbf ports: %.1f us a call (mean of %d)\n", tbf, us, kRounds);
  EXPECT_EQ(tbf, 11u);
}

}  // namespace
}  // namespace collide::testing
