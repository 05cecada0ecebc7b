// The fault injector attached for real: two namespaces joined by a veth pair, the program on the
// receiver's ingress, RoCEv2-shaped UDP datagrams (BTH with the sequence number as PSN) from a
// kernel socket in one namespace to a kernel socket in the other. What the receiver counts must
// agree exactly with what the program says it did.
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/parse_number.h"
#include "injectors/fault_injector.h"
#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide::injectors {
namespace {

using namespace std::chrono_literals;
using testing::NetnsScope;
using testing::TestNetns;

const std::string kTxIf = "cl-flt-tx";
const std::string kRxIf = "cl-flt-rx";
constexpr char kTxIp[] = "198.18.7.1";
constexpr char kRxIp[] = "198.18.7.2";
constexpr uint16_t kRocePort = 4791;
constexpr uint16_t kSenderPort = 49152;
constexpr size_t kBthSize = 12;
constexpr size_t kDataSize = 256;

uint8_t data_byte(uint32_t seq, size_t i) { return static_cast<uint8_t>(seq * 31 + i); }

std::vector<uint8_t> datagram(uint32_t seq, size_t data_size = kDataSize) {
  std::vector<uint8_t> d(kBthSize + data_size);
  d[0] = 0x0a;  // RDMA WRITE ONLY
  d[2] = d[3] = 0xff;
  d[7] = 0x11;  // destination QP
  d[9] = static_cast<uint8_t>(seq >> 16);
  d[10] = static_cast<uint8_t>(seq >> 8);
  d[11] = static_cast<uint8_t>(seq);
  for (size_t i = 0; i < data_size; ++i) d[kBthSize + i] = data_byte(seq, i);
  return d;
}

// A UDP counter of /proc/net/snmp ("InCsumErrors", "RcvbufErrors", ...) inside a namespace.
Result<uint64_t> udp_counter(const TestNetns& ns, const std::string& name) {
  auto scope = NetnsScope::enter(ns.name());
  if (!scope.ok()) return scope.status();
  std::ifstream in("/proc/thread-self/net/snmp");
  std::string header;
  std::string values;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Udp: ", 0) != 0) continue;
    if (header.empty()) {
      header = line;
    } else {
      values = line;
      break;
    }
  }
  std::istringstream h(header);
  std::istringstream v(values);
  std::string key;
  std::string value;
  while (h >> key && v >> value) {
    if (key == name) return parse_number<uint64_t>(value, "/proc/net/snmp Udp " + name);
  }
  return not_found("no Udp counter " + name + " in /proc/net/snmp");
}

struct Received {
  std::vector<uint32_t> seqs;   // in arrival order
  uint64_t damaged = 0;         // datagrams whose bytes differ from what was sent
};

class FaultE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_netns());
    COLLIDE_REQUIRE(testing::missing_bpf());
    COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
    auto tx = TestNetns::create("flt-tx");
    ASSERT_TRUE(tx.ok()) << tx.status().to_string();
    tx_ = std::move(tx).value();
    auto rx = TestNetns::create("flt-rx");
    ASSERT_TRUE(rx.ok()) << rx.status().to_string();
    rx_ = std::move(rx).value();
    ASSERT_TRUE(testing::create_veth_pair(*tx_, kTxIf, *rx_, kRxIf).ok());
    // Offloads off on both ends, checksum offload included: the sender computes the UDP
    // checksum in software, so the receiver verifies it.
    ASSERT_TRUE(testing::configure_interface(*tx_, kTxIf, std::string(kTxIp) + "/24").ok());
    ASSERT_TRUE(testing::configure_interface(*rx_, kRxIf, std::string(kRxIp) + "/24").ok());
    auto idx = testing::interface_index(*rx_, kRxIf);
    ASSERT_TRUE(idx.ok()) << idx.status().to_string();
    rx_ifindex_ = *idx;
    idx = testing::interface_index(*tx_, kTxIf);
    ASSERT_TRUE(idx.ok()) << idx.status().to_string();
    tx_ifindex_ = *idx;
  }

  // On the receiver's ingress unless told otherwise; `xdp` puts it on the ingress XDP hook.
  std::unique_ptr<FaultInjector> attach(FaultRule rule, Direction direction = Direction::kIngress,
                                        bool xdp = false) {
    const bool in = direction == Direction::kIngress;
    const TestNetns& ns = in ? *rx_ : *tx_;
    const int ifindex = in ? rx_ifindex_ : tx_ifindex_;
    rule.match.ifindex = ifindex;
    rule.match.l4_proto = 17;
    rule.match.dport = {kRocePort, kRocePort};
    FaultInjectorOptions o;
    o.rules = {rule};
    o.events = true;
    auto f = FaultInjector::load(o);
    EXPECT_TRUE(f.ok()) << f.status().to_string();
    if (!f.ok()) return nullptr;
    auto scope = NetnsScope::enter(ns.name());
    EXPECT_TRUE(scope.ok());
    if (xdp) {
      const Status attached = (*f)->attach_xdp(ifindex);
      EXPECT_TRUE(attached.ok()) << attached.to_string();
      if (!attached.ok()) return nullptr;
    } else {
      auto mode = (*f)->attach(ifindex, direction);
      EXPECT_TRUE(mode.ok()) << mode.status().to_string();
    }
    return std::move(f).value();
  }

  // Sends `count` datagrams, `batch` at a time with `gap` between batches, while a thread
  // receives them; returns once nothing has arrived for 300 ms after the last send.
  Received exchange(uint32_t count, uint32_t batch, std::chrono::microseconds gap,
                    const std::function<void()>& before_first = {}) {
    Received got;
    const int rx_fd = udp_socket(*rx_, kRxIp, kRocePort, nullptr, 0, 16 << 20, 100ms);
    const int tx_fd = udp_socket(*tx_, kTxIp, kSenderPort, kRxIp, kRocePort, 16 << 20, 100ms);
    if (rx_fd < 0 || tx_fd < 0) {
      ADD_FAILURE() << "sockets";
      return got;
    }
    std::atomic<bool> done{false};
    std::thread receiver([&] {
      std::vector<uint8_t> buf(65536);  // any UDP datagram whole
      while (true) {
        const ssize_t n = recv(rx_fd, buf.data(), buf.size(), 0);
        if (n < 0) {
          if (done.load()) break;
          continue;
        }
        if (static_cast<size_t>(n) != kBthSize + data_size_) {
          ++got.damaged;
          continue;
        }
        const uint32_t seq = static_cast<uint32_t>(buf[9]) << 16 | buf[10] << 8 | buf[11];
        const auto want = datagram(seq, data_size_);
        if (!std::equal(want.begin(), want.end(), buf.begin())) ++got.damaged;
        got.seqs.push_back(seq);
      }
    });
    if (before_first) before_first();
    for (uint32_t seq = 0; seq < count; ++seq) {
      const auto d = datagram(seq, data_size_);
      if (send(tx_fd, d.data(), d.size(), 0) != static_cast<ssize_t>(d.size())) {
        ADD_FAILURE() << "send: " << std::strerror(errno);
        break;
      }
      if ((seq + 1) % batch == 0) std::this_thread::sleep_for(gap);
    }
    std::this_thread::sleep_for(200ms);
    done = true;
    receiver.join();
    close(rx_fd);
    close(tx_fd);
    return got;
  }

  std::vector<uint32_t> event_psns(FaultInjector& f) {
    std::vector<uint32_t> psns;
    auto n = f.drain_events([&](const collide_fault_event& e) { psns.push_back(e.psn); });
    EXPECT_TRUE(n.ok()) << n.status().to_string();
    std::sort(psns.begin(), psns.end());
    return psns;
  }

  static std::vector<uint32_t> missing(const std::vector<uint32_t>& seqs, uint32_t count) {
    std::vector<bool> seen(count, false);
    for (uint32_t s : seqs) {
      if (s < count) seen[s] = true;
    }
    std::vector<uint32_t> out;
    for (uint32_t s = 0; s < count; ++s) {
      if (!seen[s]) out.push_back(s);
    }
    return out;
  }

  // 20,000 datagrams through an armed loss rule: what the receiver misses is exactly what the
  // rule says it dropped, and its event ring names each one.
  void expect_loss_counted_exactly(FaultInjector& injector, const char* label) {
  const auto rcvbuf_before = udp_counter(*rx_, "RcvbufErrors");
  ASSERT_TRUE(rcvbuf_before.ok()) << rcvbuf_before.status().to_string();
  constexpr uint32_t kCount = 20000;
  const Received got = exchange(kCount, 50, 1ms);
  const auto c = injector.counters();
  ASSERT_TRUE(c.ok());
  const auto lost = missing(got.seqs, kCount);
  std::cout << label << "sent " << kCount << ", received " << got.seqs.size() << ", rule matched "
            << (*c)[0].matched << " and dropped " << (*c)[0].acted << "\n";
  EXPECT_EQ(*udp_counter(*rx_, "RcvbufErrors"), *rcvbuf_before) << "the receiver overflowed";
  EXPECT_EQ((*c)[0].matched, kCount);
  EXPECT_EQ(got.seqs.size() + (*c)[0].acted, kCount);
  EXPECT_EQ(lost.size(), (*c)[0].acted);
  EXPECT_EQ(event_psns(injector), lost) << "the event ring names exactly the lost datagrams";
  EXPECT_GT((*c)[0].acted, 0u);
  EXPECT_EQ(got.damaged, 0u);
  }

  // 5,000 datagrams through an armed corruption rule: each corrupted one shows in the receiver's
  // UDP checksum errors and none reaches the socket.
  void expect_corruption_counted(FaultInjector& injector, const char* label) {
  const auto before = udp_counter(*rx_, "InCsumErrors");
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  constexpr uint32_t kCount = 5000;
  const Received got = exchange(kCount, 50, 1ms);
  const auto after = udp_counter(*rx_, "InCsumErrors");
  const auto c = injector.counters();
  ASSERT_TRUE(c.ok());
  std::cout << label << "corrupted " << (*c)[0].acted << ", receiver checksum errors "
            << (*after - *before) << ", received " << got.seqs.size() << "\n";
  EXPECT_GT((*c)[0].acted, 0u);
  EXPECT_EQ(*after - *before, (*c)[0].acted);
  EXPECT_EQ(got.seqs.size() + (*c)[0].acted, kCount);
  EXPECT_EQ(got.damaged, 0u) << "no corrupted datagram reached the socket";
  }

  std::unique_ptr<TestNetns> tx_;
  std::unique_ptr<TestNetns> rx_;
  int rx_ifindex_ = 0;
  int tx_ifindex_ = 0;
  size_t data_size_ = kDataSize;  // payload after the BTH of every datagram exchange() sends
};

TEST_F(FaultE2eTest, ReceiverCountedLossEqualsActedExactly) {
  FaultRule loss;
  loss.decider = Decider::kBernoulli;
  loss.probability = 0.02;
  loss.seed = 7;
  auto f = attach(loss);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->arm().ok());
  expect_loss_counted_exactly(*f, "");
}

TEST_F(FaultE2eTest, BlackholeWindowLosesExactlyWhatItSaw) {
  FaultRule hole;  // drop everything matching, 300..500 ms after arming
  hole.window = {std::chrono::nanoseconds(300ms), std::chrono::nanoseconds(500ms)};
  auto f = attach(hole);
  ASSERT_TRUE(f);
  constexpr uint32_t kCount = 1600;
  const Received got = exchange(kCount, 1, 500us, [&] { ASSERT_TRUE(f->arm().ok()); });
  const uint64_t armed_at = f->armed_at_ns();
  const auto c = f->counters();
  ASSERT_TRUE(c.ok());
  const auto lost = missing(got.seqs, kCount);
  ASSERT_FALSE(lost.empty());
  std::cout << "blackhole of 200 ms dropped " << lost.size() << " datagrams (" << lost.front()
            << ".." << lost.back() << ") of " << kCount << "\n";
  // Only the window's packets matched, all were dropped, and they are one contiguous run.
  EXPECT_EQ((*c)[0].matched, (*c)[0].acted);
  EXPECT_EQ(lost.size(), (*c)[0].acted);
  EXPECT_EQ(lost.back() - lost.front() + 1, lost.size());
  EXPECT_EQ(event_psns(*f), lost);
  EXPECT_GE((*c)[0].first_ns, armed_at + 300'000'000);
  EXPECT_LT((*c)[0].last_ns, armed_at + 500'000'000);
  EXPECT_LT(lost.back(), kCount - 1) << "traffic must outlast the window";
}

TEST_F(FaultE2eTest, CorruptionShowsInUdpChecksumErrorsOneForOne) {
  FaultRule corrupt;
  corrupt.decider = Decider::kBernoulli;
  corrupt.probability = 0.05;
  corrupt.seed = 3;
  corrupt.action = Action::kCorrupt;
  auto f = attach(corrupt);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->arm().ok());
  expect_corruption_counted(*f, "");
}

TEST_F(FaultE2eTest, SilentCorruptionPassesUdpAndArrivesDamaged) {
  FaultRule corrupt;
  corrupt.decider = Decider::kEveryNth;
  corrupt.every_nth = 20;
  corrupt.action = Action::kCorrupt;
  corrupt.corrupt_silent = true;
  auto f = attach(corrupt);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->arm().ok());
  const auto before = udp_counter(*rx_, "InCsumErrors");
  ASSERT_TRUE(before.ok());
  constexpr uint32_t kCount = 2000;
  const Received got = exchange(kCount, 50, 1ms);
  const auto c = f->counters();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].acted, kCount / 20);
  EXPECT_EQ(*udp_counter(*rx_, "InCsumErrors"), *before);
  EXPECT_EQ(got.seqs.size(), kCount);
  EXPECT_EQ(got.damaged, (*c)[0].acted);
}

TEST_F(FaultE2eTest, DuplicatesArriveTwice) {
  FaultRule dup;
  dup.decider = Decider::kBernoulli;
  dup.probability = 0.05;
  dup.seed = 5;
  dup.action = Action::kDuplicate;
  auto f = attach(dup);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->arm().ok());
  constexpr uint32_t kCount = 5000;
  const Received got = exchange(kCount, 50, 1ms);
  const auto c = f->counters();
  ASSERT_TRUE(c.ok());
  std::cout << "duplicated " << (*c)[0].acted << ", received " << got.seqs.size() << "\n";
  EXPECT_GT((*c)[0].acted, 0u);
  EXPECT_EQ(got.seqs.size(), kCount + (*c)[0].acted);
  EXPECT_EQ(missing(got.seqs, kCount).size(), 0u);
  EXPECT_EQ((*c)[0].matched, kCount) << "copies are not acted on again";
}

TEST_F(FaultE2eTest, EgressDuplicatesReachTheReceiver) {
  FaultRule dup;
  dup.id = 1;
  dup.decider = Decider::kEveryNth;
  dup.every_nth = 10;
  dup.action = Action::kDuplicate;
  auto f = attach(dup, Direction::kEgress);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->arm().ok());
  constexpr uint32_t kCount = 2000;
  const Received got = exchange(kCount, 50, 1ms);
  const auto c = f->counters();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].matched, kCount);
  EXPECT_EQ((*c)[0].acted, kCount / 10);
  EXPECT_EQ(got.seqs.size(), kCount + kCount / 10);
  EXPECT_EQ(got.damaged, 0u);
}

// What `ip -d link show` says of the receiver's interface.
std::string rx_link_details(const TestNetns& ns) {
  auto out = testing::run_command({"ip", "-n", ns.name(), "-d", "link", "show", "dev", kRxIf});
  EXPECT_TRUE(out.ok() && out->exit_code == 0);
  return out.ok() ? out->output : std::string();
}

bool has_xdp_program(const std::string& link_details) {
  return link_details.find("prog/xdp") != std::string::npos;
}

TEST_F(FaultE2eTest, XdpReceiverCountedLossEqualsActedExactly) {
  FaultRule loss;
  loss.decider = Decider::kBernoulli;
  loss.probability = 0.02;
  loss.seed = 7;
  auto f = attach(loss, Direction::kIngress, true);
  ASSERT_TRUE(f);
  const std::string details = rx_link_details(*rx_);
  ASSERT_TRUE(has_xdp_program(details)) << details;
  // veth runs XDP in its driver: "xdp", not "xdpgeneric".
  EXPECT_EQ(details.find("xdpgeneric"), std::string::npos) << details;
  ASSERT_TRUE(f->arm().ok());
  expect_loss_counted_exactly(*f, "xdp: ");
  f.reset();
  EXPECT_FALSE(has_xdp_program(rx_link_details(*rx_))) << "detached with the injector";
}

TEST_F(FaultE2eTest, XdpCorruptionShowsInUdpChecksumErrorsOneForOne) {
  FaultRule corrupt;
  corrupt.decider = Decider::kBernoulli;
  corrupt.probability = 0.05;
  corrupt.seed = 3;
  corrupt.action = Action::kCorrupt;
  auto f = attach(corrupt, Direction::kIngress, true);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->arm().ok());
  expect_corruption_counted(*f, "xdp: ");
}

TEST_F(FaultE2eTest, XdpProgramGoesWithAKilledProcess) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child attaches and then waits to be killed; it never returns into the test.
    close(ready[0]);
    FaultInjectorOptions o;
    o.rules = {FaultRule{}};
    auto f = FaultInjector::load(o);
    if (!f.ok()) _exit(2);
    auto scope = NetnsScope::enter(rx_->name());
    if (!scope.ok() || !(*f)->attach_xdp(rx_ifindex_).ok() || !(*f)->arm().ok()) _exit(3);
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(4);
    while (true) pause();
  }
  close(ready[1]);
  char byte = 0;
  const ssize_t n = read(ready[0], &byte, 1);
  close(ready[0]);
  if (n != 1) {
    int status = 0;
    waitpid(child, &status, 0);
    FAIL() << "the child did not attach; exit status " << WEXITSTATUS(status);
  }
  const std::string attached = rx_link_details(*rx_);
  const bool was_attached = has_xdp_program(attached);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(was_attached) << attached;
  // Closing the dead process's files releases the link; allow the kernel a moment to do it.
  std::string after;
  for (int i = 0; i < 50; ++i) {
    after = rx_link_details(*rx_);
    if (!has_xdp_program(after)) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_FALSE(has_xdp_program(after)) << after;
  // And traffic flows again untouched.
  const Received got = exchange(200, 50, 1ms);
  EXPECT_EQ(got.seqs.size(), 200u);
}

TEST_F(FaultE2eTest, XdpOnJumboMtuSeesWholeMultiBufferFrames) {
  // Frames beyond a page reach XDP in several buffers; the program must see their whole length.
  for (const auto& [ns, dev] : {std::pair{tx_.get(), kTxIf}, std::pair{rx_.get(), kRxIf}}) {
    ASSERT_TRUE(ns->exec({"ip", "link", "set", "dev", dev, "mtu", "9000"}).ok());
  }
  data_size_ = 8000;
  FaultRule nth;
  nth.decider = Decider::kEveryNth;
  nth.every_nth = 10;
  auto f = attach(nth, Direction::kIngress, true);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->arm().ok());
  constexpr uint32_t kCount = 1000;
  const Received got = exchange(kCount, 20, 1ms);
  const auto c = f->counters();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].matched, kCount);
  EXPECT_EQ((*c)[0].acted, kCount / 10);
  // IPv4 20 + UDP 8 + BTH 12 + 8000 after the 14-byte Ethernet header.
  EXPECT_EQ((*c)[0].bytes_acted, (kCount / 10) * (14 + 20 + 8 + 12 + 8000));
  EXPECT_EQ(got.seqs.size(), kCount - kCount / 10);
  EXPECT_EQ(got.damaged, 0u);
}

}  // namespace
}  // namespace collide::injectors
