// PortFeeds on a small switch of its own: a router namespace forwarding between three end
// namespaces. What each end sends is known to the byte, so every (egress, ingress) pair of the
// router's counts is known too.
#include "orchestrator/testbed/port_feeds.h"

#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/parse_number.h"
#include "orchestrator/testbed/port_ecn_marker.h"
#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::testbed {
namespace {

using collide::testing::TestNetns;
using std::chrono::milliseconds;

constexpr uint16_t kSinkPort = 6000;
// What a UDP datagram adds to its payload at tc egress: UDP 8, IPv4 20, Ethernet 14.
constexpr uint64_t kHeaderBytes = 8 + 20 + 14;
constexpr int kEct0 = 0x02;

// A: a0 198.18.1.2 <-> ra 198.18.1.1, B: b0 198.18.2.2 <-> rb, C: c0 198.18.3.2 <-> rc, the
// router R forwarding between them. Neighbours are permanent, so no ARP frame is counted.
struct SmallSwitch {
  std::unique_ptr<TestNetns> r, a, b, c;
  int ra = 0, rb = 0, rc = 0;  // the router's ports, by ifindex

  static Result<SmallSwitch> create(const std::string& tag);
};

// `r_index`: the router port's ifindex, 0 for the next free one.
Status link_end_to_router(const TestNetns& end, const std::string& end_if, const TestNetns& r,
                          const std::string& r_if, int subnet, int r_index = 0) {
  const std::string end_ip = fmt::format("198.18.{}.2", subnet);
  const std::string r_ip = fmt::format("198.18.{}.1", subnet);
  if (r_index == 0) {
    COLLIDE_RETURN_IF_ERROR(collide::testing::create_veth_pair(end, end_if, r, r_if));
  } else {
    COLLIDE_RETURN_IF_ERROR(collide::testing::run_checked(
        {"ip", "link", "add", r_if, "index", std::to_string(r_index), "netns", r.name(), "type",
         "veth", "peer", "name", end_if, "netns", end.name()}));
  }
  COLLIDE_RETURN_IF_ERROR(collide::testing::configure_interface(end, end_if, end_ip + "/24"));
  COLLIDE_RETURN_IF_ERROR(collide::testing::configure_interface(r, r_if, r_ip + "/24"));
  COLLIDE_RETURN_IF_ERROR(collide::testing::run_checked(
      {"ip", "-n", end.name(), "route", "add", "default", "via", r_ip}));
  auto end_mac = collide::testing::interface_mac(end, end_if);
  if (!end_mac.ok()) return end_mac.status();
  auto r_mac = collide::testing::interface_mac(r, r_if);
  if (!r_mac.ok()) return r_mac.status();
  COLLIDE_RETURN_IF_ERROR(collide::testing::run_checked({"ip", "-n", end.name(), "neigh",
                                                         "replace", r_ip, "lladdr", *r_mac, "dev",
                                                         end_if, "nud", "permanent"}));
  return collide::testing::run_checked({"ip", "-n", r.name(), "neigh", "replace", end_ip,
                                        "lladdr", *end_mac, "dev", r_if, "nud", "permanent"});
}

Result<SmallSwitch> SmallSwitch::create(const std::string& tag) {
  SmallSwitch s;
  for (auto [ns, role] : {std::pair{&s.r, "r"}, {&s.a, "a"}, {&s.b, "b"}, {&s.c, "c"}}) {
    auto made = TestNetns::create(tag + "-" + role);
    if (!made.ok()) return made.status();
    *ns = std::move(made).value();
  }
  COLLIDE_RETURN_IF_ERROR(s.r->exec({"sysctl", "-qw", "net.ipv4.ip_forward=1"}));
  COLLIDE_RETURN_IF_ERROR(link_end_to_router(*s.a, "a0", *s.r, "ra", 1));
  COLLIDE_RETURN_IF_ERROR(link_end_to_router(*s.b, "b0", *s.r, "rb", 2));
  COLLIDE_RETURN_IF_ERROR(link_end_to_router(*s.c, "c0", *s.r, "rc", 3));
  for (auto [index, ifname] : {std::pair{&s.ra, "ra"}, {&s.rb, "rb"}, {&s.rc, "rc"}}) {
    auto found = collide::testing::interface_index(*s.r, ifname);
    if (!found.ok()) return found.status();
    *index = *found;
  }
  return s;
}

// Sends `count` datagrams of `payload` bytes from `ns` (bound to `ip`) to C's sink.
Status send_to_c(const TestNetns& ns, const char* ip, int count, size_t payload, int tos = 0) {
  const int fd = collide::testing::udp_socket(ns, ip, 0, "198.18.3.2", kSinkPort, 0,
                                              std::chrono::seconds(1));
  if (fd < 0) return errno_status(errno, std::string("a UDP socket on ") + ip);
  setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
  const std::vector<char> data(payload, 'x');
  for (int i = 0; i < count; ++i) {
    if (send(fd, data.data(), data.size(), 0) != static_cast<ssize_t>(data.size())) {
      const int err = errno;
      close(fd);
      return errno_status(err, std::string("sending from ") + ip);
    }
  }
  close(fd);
  return {};
}

// C's sink: receives until `count` datagrams have arrived, so that all have passed rc's egress.
Status receive(int sink, int count) {
  char buffer[2048];
  for (int i = 0; i < count; ++i) {
    if (recv(sink, buffer, sizeof(buffer), 0) < 0) {
      return errno_status(errno, fmt::format("C received {} of {} datagrams", i, count));
    }
  }
  return {};
}

class PortFeedsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(collide::testing::missing_netns());
    COLLIDE_REQUIRE(collide::testing::missing_bpf());
    auto made = SmallSwitch::create("pfeed");
    ASSERT_THAT(made, IsOk());
    sw_ = std::move(made).value();
    sink_ = collide::testing::udp_socket(*sw_.c, "198.18.3.2", kSinkPort, nullptr, 0, 4 << 20,
                                         std::chrono::seconds(2));
    ASSERT_GE(sink_, 0);
    // The path works before anything is counted; the ping's frames are not in the counts.
    ASSERT_THAT(sw_.a->exec({"ping", "-c", "1", "-W", "2", "198.18.3.2"}), IsOk());
  }
  void TearDown() override {
    if (sink_ >= 0) close(sink_);
  }

  Result<std::unique_ptr<PortFeeds>> attach_in_router(TosMatch lossless = {}) {
    auto scope = netns::Scope::enter(sw_.r->name());
    if (!scope.ok()) return scope.status();
    return PortFeeds::attach({sw_.ra, sw_.rb, sw_.rc}, lossless);
  }

  SmallSwitch sw_;
  int sink_ = -1;
};

TEST_F(PortFeedsTest, CountsEachIngressPortsBytesTowardsTheEgressPort) {
  auto feeds = attach_in_router();
  ASSERT_THAT(feeds, IsOk());
  const PortFeeds& f = **feeds;

  ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 100, 200), IsOk());
  ASSERT_THAT(send_to_c(*sw_.b, "198.18.2.2", 50, 700), IsOk());
  ASSERT_THAT(send_to_c(*sw_.r, "198.18.3.1", 10, 100), IsOk());  // the switch's own
  ASSERT_THAT(receive(sink_, 160), IsOk());

  EXPECT_EQ(f.frames(sw_.rc, sw_.ra), 100u);
  EXPECT_EQ(f.bytes(sw_.rc, sw_.ra), 100 * (200 + kHeaderBytes));
  EXPECT_EQ(f.frames(sw_.rc, sw_.rb), 50u);
  EXPECT_EQ(f.bytes(sw_.rc, sw_.rb), 50 * (700 + kHeaderBytes));
  EXPECT_EQ(f.frames(sw_.rc, 0), 10u);
  EXPECT_EQ(f.bytes(sw_.rc, 0), 10 * (100 + kHeaderBytes));
  // Nothing went anywhere else, nor came from elsewhere.
  for (int egress : {sw_.ra, sw_.rb, sw_.rc}) {
    for (int ingress = 0; ingress <= kMaxFeedIfindex + 1; ++ingress) {
      if (egress == sw_.rc && (ingress == sw_.ra || ingress == sw_.rb || ingress == 0)) continue;
      EXPECT_EQ(f.bytes(egress, ingress), 0u) << egress << " from " << ingress;
      EXPECT_EQ(f.frames(egress, ingress), 0u) << egress << " from " << ingress;
    }
  }
}

// The qdisc behind the hook (a switch port's tbf) counts the same bytes: what the control loop
// compares with the qdisc's backlog is in the qdisc's own unit.
TEST_F(PortFeedsTest, CountsTheBytesThePortsQdiscCounts) {
  ASSERT_THAT(collide::testing::run_checked({"ip", "netns", "exec", sw_.r->name(), "tc", "qdisc",
                                             "add", "dev", "rc", "root", "tbf", "rate", "1gbit",
                                             "burst", "64kb", "limit", "4mb"}),
              IsOk());
  auto feeds = attach_in_router();
  ASSERT_THAT(feeds, IsOk());
  ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 30, 1000), IsOk());
  ASSERT_THAT(send_to_c(*sw_.b, "198.18.2.2", 20, 64), IsOk());
  ASSERT_THAT(receive(sink_, 50), IsOk());
  auto stats = collide::testing::run_command(
      {"ip", "netns", "exec", sw_.r->name(), "tc", "-s", "qdisc", "show", "dev", "rc"});
  ASSERT_THAT(stats, IsOk());
  // " Sent 33380 bytes 50 pkt (dropped 0, ..."
  const size_t sent = stats->output.find(" Sent ");
  ASSERT_NE(sent, std::string::npos) << stats->output;
  auto qdisc_bytes = parse_number<uint64_t>(
      stats->output.substr(sent + 6, stats->output.find(' ', sent + 6) - sent - 6), "tc's Sent");
  ASSERT_THAT(qdisc_bytes, IsOk());
  EXPECT_EQ((*feeds)->bytes(sw_.rc, sw_.ra) + (*feeds)->bytes(sw_.rc, sw_.rb), *qdisc_bytes);
  EXPECT_EQ(*qdisc_bytes, 30 * (1000 + kHeaderBytes) + 20 * (64 + kHeaderBytes));
}

// On ports with a queue per priority only the lossless priority's frames count: RoCE's DSCP 26
// (priority 3) with either ECN codepoint, not best effort, nor DSCP 46 (priority 5).
TEST_F(PortFeedsTest, CountsOnlyTheLosslessPrioritysFrames) {
  auto feeds = attach_in_router(priority_tos(3));
  ASSERT_THAT(feeds, IsOk());
  ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 40, 300, 26 << 2 | kEct0), IsOk());
  ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 7, 300, 26 << 2 | 0x03), IsOk());
  ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 30, 300, 0), IsOk());
  ASSERT_THAT(send_to_c(*sw_.b, "198.18.2.2", 20, 300, 46 << 2), IsOk());
  ASSERT_THAT(send_to_c(*sw_.b, "198.18.2.2", 5, 300, 24 << 2), IsOk());
  ASSERT_THAT(receive(sink_, 102), IsOk());
  EXPECT_EQ((*feeds)->frames(sw_.rc, sw_.ra), 47u);
  EXPECT_EQ((*feeds)->bytes(sw_.rc, sw_.ra), 47 * (300 + kHeaderBytes));
  EXPECT_EQ((*feeds)->frames(sw_.rc, sw_.rb), 5u);
}

TEST_F(PortFeedsTest, EachAttachCountsApart) {
  auto first = attach_in_router();
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 5, 100), IsOk());
  ASSERT_THAT(receive(sink_, 5), IsOk());
  auto second = attach_in_router();
  ASSERT_THAT(second, IsOk());
  ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 3, 100), IsOk());
  ASSERT_THAT(receive(sink_, 3), IsOk());
  EXPECT_EQ((*first)->frames(sw_.rc, sw_.ra), 8u);
  EXPECT_EQ((*second)->frames(sw_.rc, sw_.ra), 3u);
  first->reset();  // detaching one leaves the other counting
  ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 2, 100), IsOk());
  ASSERT_THAT(receive(sink_, 2), IsOk());
  EXPECT_EQ((*second)->frames(sw_.rc, sw_.ra), 5u);
}

TEST_F(PortFeedsTest, RefusesEgressPortsItCannotCountApart) {
  auto scope = netns::Scope::enter(sw_.r->name());
  ASSERT_THAT(scope, IsOk());
  EXPECT_THAT(PortFeeds::attach({sw_.ra, kMaxFeedIfindex}, {}),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("egress ifindex 64")));
  EXPECT_THAT(PortFeeds::attach({sw_.ra, sw_.ra}, {}),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("given twice")));
  EXPECT_THAT(PortFeeds::attach({sw_.rc + 10}, {}), ::testing::Not(IsOk()));  // no such device
}

// Two senders on A, one on each CPU: both CPUs add to the same pair at once, and no frame is lost
// from the count. (With plain adds instead of atomic ones, bytes went missing in 4 of 7 runs.)
TEST_F(PortFeedsTest, CpusCountingOneIngressAtOnceLoseNothing) {
  auto feeds = attach_in_router();
  ASSERT_THAT(feeds, IsOk());
  constexpr int kPerSender = 50000;
  const int big = 64 << 20;
  setsockopt(sink_, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
  std::vector<Status> sent(2);
  std::vector<std::thread> senders;
  for (int cpu = 0; cpu < 2; ++cpu) {
    senders.emplace_back([&, cpu] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu % std::thread::hardware_concurrency(), &set);
      pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
      // In bursts, so that no receive backlog on the way overflows.
      for (int burst = 0; burst < kPerSender / 100 && sent[cpu].ok(); ++burst) {
        sent[cpu] = send_to_c(*sw_.a, "198.18.1.2", 100, 18);
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    });
  }
  const Status received = receive(sink_, 2 * kPerSender);
  for (auto& t : senders) t.join();
  ASSERT_THAT(sent[0], IsOk());
  ASSERT_THAT(sent[1], IsOk());
  ASSERT_THAT(received, IsOk());
  EXPECT_EQ((*feeds)->frames(sw_.rc, sw_.ra), 2u * kPerSender);
  EXPECT_EQ((*feeds)->bytes(sw_.rc, sw_.ra), 2u * kPerSender * (18 + kHeaderBytes));
}

// An ingress port numbered kMaxFeedIfindex or above is counted in the overflow slot, which any
// such index reads.
TEST_F(PortFeedsTest, IngressPortsBeyondTheLimitShareOneSlot) {
  auto d = TestNetns::create("pfeed-d");
  ASSERT_THAT(d, IsOk());
  ASSERT_THAT(link_end_to_router(**d, "d0", *sw_.r, "rd", 4, 100), IsOk());
  auto rd = collide::testing::interface_index(*sw_.r, "rd");
  ASSERT_THAT(rd, IsOk());
  ASSERT_EQ(*rd, 100);
  auto feeds = attach_in_router();
  ASSERT_THAT(feeds, IsOk());
  ASSERT_THAT(send_to_c(**d, "198.18.4.2", 7, 100), IsOk());
  ASSERT_THAT(receive(sink_, 7), IsOk());
  for (int ingress : {kMaxFeedIfindex, 100, 4096}) {
    EXPECT_EQ((*feeds)->frames(sw_.rc, ingress), 7u) << ingress;
    EXPECT_EQ((*feeds)->bytes(sw_.rc, ingress), 7 * (100 + kHeaderBytes)) << ingress;
  }
  EXPECT_EQ((*feeds)->frames(sw_.rc, kMaxFeedIfindex - 1), 0u);
}

// The ECN marker on the same hook: every frame reaches both, in either order of attaching. A
// program attached later runs later, so frames the marker drops (WRED on frames that are not
// ECN-capable) reach a counter attached after it, and are counted, only when it came first.
TEST_F(PortFeedsTest, TheEcnMarkerOnTheSameHookSeesEveryFrameAndSoDoesTheCounter) {
  TestbedPlan plan;
  PlannedLink link;
  link.a.netns = sw_.r->name();
  link.a.ifname = "rc";
  // Kmin = Kmax = 0: every ECN-capable frame is marked, every other one dropped.
  link.a.queue = {.tier = "leaf_down", .gbps = 10, .profiled = true, .buffer_bytes = 1 << 30,
                  .ecn = true, .kmin_bytes = 0, .kmax_bytes = 0, .pmax = 1};
  link.b.netns = sw_.c->name();
  link.b.ifname = "c0";
  plan.links.push_back(link);
  const std::string port = sw_.r->name() + "/rc";

  for (bool marker_first : {true, false}) {
    SCOPED_TRACE(marker_first ? "marker attached first" : "counter attached first");
    std::unique_ptr<PortEcnMarkers> markers;
    std::unique_ptr<PortFeeds> feeds;
    if (marker_first) {
      auto m = PortEcnMarkers::attach(plan);
      ASSERT_THAT(m, IsOk());
      markers = std::move(m).value();
    }
    auto f = attach_in_router();
    ASSERT_THAT(f, IsOk());
    feeds = std::move(f).value();
    if (!marker_first) {
      auto m = PortEcnMarkers::attach(plan);
      ASSERT_THAT(m, IsOk());
      markers = std::move(m).value();
    }

    ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 40, 300, kEct0), IsOk());
    ASSERT_THAT(receive(sink_, 40), IsOk());
    EXPECT_EQ(markers->counts()[port].marked, 40u);
    EXPECT_EQ(feeds->frames(sw_.rc, sw_.ra), 40u);

    ASSERT_THAT(send_to_c(*sw_.a, "198.18.1.2", 20, 300), IsOk());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (markers->counts()[port].early_drops < 20 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    EXPECT_EQ(markers->counts()[port].early_drops, 20u);
    EXPECT_EQ(feeds->frames(sw_.rc, sw_.ra), marker_first ? 40u : 60u);
    EXPECT_EQ(feeds->bytes(sw_.rc, sw_.ra), (marker_first ? 40 : 60) * (300 + kHeaderBytes));
  }
}

// The control loop reads every pair every few hundred microseconds: a sweep must cost
// microseconds, which only reads of shared memory (no system call per pair) achieve.
TEST_F(PortFeedsTest, ReadingEveryPairTakesMicroseconds) {
  auto feeds = attach_in_router();
  ASSERT_THAT(feeds, IsOk());
  const PortFeeds& f = **feeds;
  constexpr int kSweeps = 1000;
  uint64_t sum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    for (int egress = 0; egress < kMaxFeedIfindex; ++egress) {
      for (int ingress = 0; ingress < kMaxFeedIfindex; ++ingress) {
        sum += f.bytes(egress, ingress) + f.frames(egress, ingress);
      }
    }
  }
  const auto per_sweep = std::chrono::duration<double, std::micro>(
                             std::chrono::steady_clock::now() - start) / kSweeps;
  EXPECT_EQ(sum, 0u);
  std::printf("reading 64x64 pairs (bytes and frames): %.2f us per sweep\n", per_sweep.count());
  EXPECT_LT(per_sweep.count(), 1000.0);
}

}  // namespace
}  // namespace collide::orchestrator::testbed
