#include "replayer/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <iostream>
#include <random>
#include <set>

#include "common/bytes.h"
#include "replayer/engine/flow_tag_codec.h"
#include "replayer/engine/heap_frame_for_tests.h"
#include "replayer/wire/pfc_frame.h"
#include "replayer/wire/roce_frame.h"
#include "tests/support/status_matchers.h"

namespace collide::replayer::engine {
namespace {

using transport::Nanos;

// Two ports joined by a wire on a virtual clock: a frame submitted at t arrives at t + delay,
// unless the loss model drops it. Good enough to drive two engines deterministically.
struct FakeWire {
  Nanos now = 0;
  Nanos delay = 2'000;
  double loss = 0;
  bool mark_ce = false;  // ECN CE on every ECN-capable frame, as a congested switch would
  std::mt19937_64 rng{1};
  std::set<uint64_t> drop;  // frame numbers (both directions, in submit order)
  // Reordering without loss: every late_every-th frame arrives late_ns later than the others.
  uint64_t late_every = 0;
  Nanos late_ns = 0;
  uint64_t submitted = 0;
  uint64_t dropped = 0;
  // Frames each side submitted at one instant, and the most ever: the bursts a pacer allowed.
  Nanos last_submit_at[2] = {~0ull, ~0ull};
  uint64_t same_instant[2] = {0, 0};
  uint64_t max_same_instant[2] = {0, 0};
  uint64_t bytes_submitted[2] = {0, 0};
  std::vector<Nanos> submitted_at[2];  // when each side handed each frame to its port
  // Each side's receive ring: at most this many frames wait in it (the wire is short, so frames on
  // their way count too); what arrives when it is full is lost. 0: no limit.
  size_t ring_frames = 0;
  uint64_t ring_dropped[2] = {0, 0};  // by receiving side
  // MAC control frames each side sent, with when.
  std::vector<std::pair<Nanos, std::vector<uint8_t>>> control_sent[2];
  std::deque<std::pair<Nanos, std::vector<uint8_t>>> queue[2];

  std::optional<Nanos> next_arrival() const {
    std::optional<Nanos> t;
    for (const auto& q : queue) {
      if (!q.empty() && (!t || q.front().first < *t)) t = q.front().first;
    }
    return t;
  }
};

class FakePort : public backend::PacketPort {
 public:
  FakePort(FakeWire& wire, int side, wire::MacAddress mac) : wire_(wire), side_(side), mac_(mac) {}
  Status acquire(std::span<backend::Frame> frames) override {
    for (auto& f : frames) f = make(kCapacity);
    return {};
  }
  uint16_t submit(std::span<backend::Frame> frames) override {
    for (auto& f : frames) {
      if (wire_.last_submit_at[side_] != wire_.now) wire_.same_instant[side_] = 0;
      wire_.last_submit_at[side_] = wire_.now;
      wire_.max_same_instant[side_] =
          std::max(wire_.max_same_instant[side_], ++wire_.same_instant[side_]);
      wire_.bytes_submitted[side_] += f.len;
      wire_.submitted_at[side_].push_back(wire_.now);
      const uint64_t number = wire_.submitted++;
      const bool lost = wire_.drop.count(number) ||
                        std::uniform_real_distribution<double>(0, 1)(wire_.rng) < wire_.loss;
      if (wire_.mark_ce && f.len > 34 && (f.data[15] & 0x03) == 0x02) {
        f.data[15] |= 0x03;
        f.data[24] = f.data[25] = 0;
        bytes::store_be16(f.data + 24, wire::ipv4_header_checksum({f.data + 14, 20}));
      }
      if (wire::is_mac_control({f.data, f.len})) {
        wire_.control_sent[side_].push_back(
            {wire_.now, std::vector<uint8_t>(f.data, f.data + f.len)});
      }
      const bool late = wire_.late_every != 0 && number % wire_.late_every == 0;
      const Nanos arrival = wire_.now + wire_.delay + (late ? wire_.late_ns : 0);
      auto& q = wire_.queue[1 - side_];
      if (lost) {
        ++wire_.dropped;
      } else if (wire_.ring_frames != 0 && q.size() >= wire_.ring_frames) {
        ++wire_.ring_dropped[1 - side_];
      } else {
        // In arrival order: frames sent later but not held back overtake a late one.
        auto at = std::upper_bound(q.begin(), q.end(), arrival,
                                   [](Nanos t, const auto& e) { return t < e.first; });
        q.insert(at, {arrival, std::vector<uint8_t>(f.data, f.data + f.len)});
      }
      free(f);
    }
    return static_cast<uint16_t>(frames.size());
  }
  uint16_t receive(std::span<backend::Frame> frames) override {
    auto& q = wire_.queue[side_];
    uint16_t n = 0;
    while (n < frames.size() && !q.empty() && q.front().first <= wire_.now) {
      frames[n] = make(static_cast<uint32_t>(q.front().second.size()));
      std::copy(q.front().second.begin(), q.front().second.end(), frames[n].data);
      frames[n].len = static_cast<uint32_t>(q.front().second.size());
      q.pop_front();
      ++n;
    }
    return n;
  }
  void release(std::span<backend::Frame> frames) override {
    for (auto& f : frames) free(f);
  }
  void wait_for_frames(std::chrono::microseconds) override {}
  wire::MacAddress mac() const override { return mac_; }
  uint32_t max_frame_size() const override { return kCapacity; }
  backend::PortCounters counters() const override { return {}; }
  std::string describe() const override { return "fake"; }

 private:
  static constexpr uint32_t kCapacity = 9216;
  static backend::Frame make(uint32_t capacity) { return testing_frames::allocate(capacity); }
  static void free(backend::Frame& f) { testing_frames::free(f); }
  FakeWire& wire_;
  int side_;
  wire::MacAddress mac_;
};

struct TwoHostRun {
  std::vector<OpRecord> records;
  EngineCounters a, b;
  std::string failure;
  Nanos end = 0;
};

// 4 ranks, 2 per host, one communicator; host A runs ranks 0-1, host B ranks 2-3.
TwoHostRun run_two_hosts(FakeWire& wire, const std::vector<v1::Op>& per_rank_template,
                         transport::Recovery recovery, Nanos limit = 10'000'000'000ull,
                         bool dcqcn = false,
                         const std::function<void(EngineConfig&)>& tweak = {},
                         const std::function<void(EngineConfig&)>& tweak_b = {},
                         const std::map<uint32_t, std::vector<v1::Op>>* own_programs = nullptr) {
  v1::TraceHeader header;
  header.set_world_size(4);
  auto* comm = header.add_communicators();
  comm->set_id("world");
  for (uint32_t r = 0; r < 4; ++r) comm->add_ranks(r);
  auto placement = *collectives::Placement::uniform(4, 2, 1);
  collectives::ExpandOptions expand;
  expand.channels = 2;
  expand.slice_bytes = 64 * 1024;
  expand.qps_per_connection = 2;
  EngineConfig config;
  config.qp.recovery = recovery;
  config.qp.mtu = 1024;
  config.qp.timeout_exponent = 10;  // 4 ms
  config.dcqcn.enabled = dcqcn;
  if (tweak) tweak(config);

  const auto mac_a = *wire::MacAddress::parse("02:00:00:00:00:0a");
  const auto mac_b = *wire::MacAddress::parse("02:00:00:00:00:0b");
  RankAddressing addressing;
  addressing.ip_of = [](uint32_t r) { return wire::Ipv4Address{0xc6120000u + 10 + r}; };
  FakePort port_a(wire, 0, mac_a);
  FakePort port_b(wire, 1, mac_b);
  EngineConfig config_b = config;
  if (tweak_b) tweak_b(config_b);
  auto programs = [&](uint32_t first) {
    std::map<uint32_t, std::vector<v1::Op>> p;
    if (own_programs != nullptr) {
      for (const auto& [rank, ops] : *own_programs) {
        if (rank >= first && rank < first + 2) p[rank] = ops;
      }
      return p;
    }
    for (uint32_t r = first; r < first + 2; ++r) {
      for (v1::Op op : per_rank_template) {
        op.set_rank(r);
        p[r].push_back(op);
      }
    }
    return p;
  };
  RankAddressing to_b = addressing, to_a = addressing;
  to_b.next_hop_mac = [&](uint32_t) { return mac_b; };
  to_a.next_hop_mac = [&](uint32_t) { return mac_a; };
  auto clock = [&] { return wire.now; };
  auto a = Engine::create(config, header, placement, expand, programs(0), to_b, port_a, clock);
  auto b = Engine::create(config_b, header, placement, expand, programs(2), to_a, port_b, clock);
  EXPECT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_TRUE(b.ok()) << b.status().to_string();

  TwoHostRun out;
  while (!((*a)->finished() && (*b)->finished()) && wire.now < limit) {
    // Both engines poll every round, whether or not the first made progress.
    const bool progress_a = (*a)->poll();
    const bool progress_b = (*b)->poll();
    const bool progress = progress_a || progress_b;
    if (progress) continue;
    std::optional<Nanos> next = wire.next_arrival();
    for (auto* e : {a->get(), b->get()}) {
      auto t = e->next_deadline();
      if (t && (!next || *t < *next)) next = t;
    }
    wire.now = next && *next > wire.now ? *next : wire.now + 1;
  }
  out.end = wire.now;
  for (auto* e : {a->get(), b->get()}) {
    for (auto& r : e->take_records()) out.records.push_back(r);
    if (e->failed()) out.failure = e->failure();
  }
  out.a = (*a)->counters();
  out.b = (*b)->counters();
  return out;
}

v1::Op all_reduce(uint64_t bytes, uint64_t index = 0) {
  v1::Op op;
  op.set_kind(v1::OP_KIND_ALL_REDUCE);
  op.set_comm("world");
  op.set_bytes(bytes);
  op.set_index(index);
  return op;
}

class EngineTest : public ::testing::TestWithParam<transport::Recovery> {};

TEST_P(EngineTest, RingAllReduceAcrossTwoHostsCompletesExactly) {
  FakeWire wire;
  const uint64_t bytes = 1 << 20;
  const auto run = run_two_hosts(wire, {all_reduce(bytes, 0), all_reduce(bytes / 2, 1)}, GetParam());
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  ASSERT_EQ(run.records.size(), 8u);
  for (const OpRecord& r : run.records) {
    EXPECT_FALSE(r.failed);
    EXPECT_GE(r.end_ns, r.start_ns);
  }
  // Ring over 4 ranks on 2 hosts: 2 of the 4 ring edges per channel cross hosts. Every payload
  // byte arrived once, intact.
  const uint64_t crossing = 2 * (2 * 3 * (bytes / 4)) + 2 * (2 * 3 * (bytes / 2 / 4));
  EXPECT_EQ(run.a.responders.bytes_received + run.b.responders.bytes_received, crossing);
  EXPECT_EQ(run.a.pattern_errors + run.b.pattern_errors, 0u);
  EXPECT_EQ(run.a.icrc_errors + run.b.icrc_errors, 0u);
  EXPECT_EQ(run.a.requesters.retransmitted_packets + run.b.requesters.retransmitted_packets, 0u);
}

TEST_P(EngineTest, LossIsRecoveredAndEveryDropRetransmitted) {
  FakeWire wire;
  wire.loss = 0.01;
  wire.rng.seed(42);
  const uint64_t bytes = 4 << 20;
  const auto run = run_two_hosts(wire, {all_reduce(bytes)}, GetParam());
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  ASSERT_EQ(run.records.size(), 4u);
  const uint64_t crossing = 2 * (2 * 3 * (bytes / 4));
  EXPECT_EQ(run.a.responders.bytes_received + run.b.responders.bytes_received, crossing);
  EXPECT_GT(wire.dropped, 10u);
  const uint64_t resent =
      run.a.requesters.retransmitted_packets + run.b.requesters.retransmitted_packets;
  // Drops hit ACKs too, which cost no resend when a later ACK covers them.
  EXPECT_GT(resent, 0u);
  EXPECT_EQ(run.a.pattern_errors + run.b.pattern_errors, 0u);
}

// The switch port pauses host A's priority 3 with the longest PFC time: A sends nothing for the
// pause (3.36 ms at 10 Gb/s), the job then completes, and A counts the frame and the time held.
TEST_P(EngineTest, APfcPauseFromTheSwitchHoldsEverythingTheHostSends) {
  FakeWire wire;
  constexpr Nanos kPauseAt = 3'000;  // the job takes about 9 us on this wire unpaused
  constexpr double kLineGbps = 10;
  const Nanos pause_ns = wire::pause_quanta_ns(0xffff, kLineGbps);
  wire::PauseFrame pause;
  pause.enabled = 1 << 3;
  pause.quanta[3] = 0xffff;
  std::vector<uint8_t> frame(wire::kMacControlFrameSize);
  ASSERT_TRUE(wire::encode_pfc(pause, frame).ok());
  wire.queue[0].push_back({kPauseAt, frame});  // arrives at host A mid-transfer
  const auto run = run_two_hosts(wire, {all_reduce(4 << 20)}, GetParam(), 10'000'000'000ull, false,
                                 [&](EngineConfig& c) {
                                   c.pfc.priority = 3;
                                   c.pfc.line_gbps = kLineGbps;
                                 });
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  ASSERT_EQ(run.records.size(), 4u);
  EXPECT_EQ(run.a.pause_frames, 1u);
  EXPECT_EQ(run.a.paused_ns, pause_ns);
  EXPECT_EQ(run.b.pause_frames, 0u);
  EXPECT_EQ(run.b.paused_ns, 0u);
  // A was sending when the pause came, sent nothing while it held, and sent again after it.
  const auto& sent = wire.submitted_at[0];
  const auto during = std::count_if(sent.begin(), sent.end(), [&](Nanos t) {
    return t > kPauseAt && t < kPauseAt + pause_ns;
  });
  EXPECT_EQ(during, 0);
  EXPECT_TRUE(std::any_of(sent.begin(), sent.end(), [&](Nanos t) { return t < kPauseAt; }));
  EXPECT_TRUE(std::any_of(sent.begin(), sent.end(), [&](Nanos t) { return t >= kPauseAt + pause_ns; }));
  EXPECT_GE(run.end, kPauseAt + pause_ns);
  const uint64_t crossing = 2 * (2 * 3 * ((4u << 20) / 4));
  EXPECT_EQ(run.a.responders.bytes_received + run.b.responders.bytes_received, crossing);
}

TEST_P(EngineTest, BlackholeFailsTheJobWithNcclsError) {
  FakeWire wire;
  wire.loss = 1.0;  // every frame lost: the link is down for good
  const auto run = run_two_hosts(wire, {all_reduce(1 << 16)}, GetParam(), 60'000'000'000ull);
  EXPECT_NE(run.failure.find("IBV_WC_RETRY_EXC_ERR"), std::string::npos) << run.failure;
  bool any_failed = false;
  for (const OpRecord& r : run.records) any_failed = any_failed || r.failed;
  EXPECT_TRUE(any_failed);
  // 8 attempts of 4.096 us * 2^10 each before giving up.
  EXPECT_GE(run.end, 8 * 4096ull * 1024);
}

TEST(EngineDcqcnTest, CongestionMarksSlowTheSendersOnlyWithDcqcn) {
  const uint64_t bytes = 4 << 20;
  FakeWire plain;
  plain.mark_ce = true;
  const auto without = run_two_hosts(plain, {all_reduce(bytes)}, transport::Recovery::kGoBackN,
                                     10'000'000'000ull, false);
  FakeWire controlled;
  controlled.mark_ce = true;
  const auto with = run_two_hosts(controlled, {all_reduce(bytes)}, transport::Recovery::kGoBackN,
                                  10'000'000'000ull, true);
  ASSERT_TRUE(without.failure.empty()) << without.failure;
  ASSERT_TRUE(with.failure.empty()) << with.failure;
  // Receivers answer CE marks with CNPs either way; only DCQCN senders slow down for them.
  EXPECT_GT(without.a.responders.cnps_sent + without.b.responders.cnps_sent, 0u);
  EXPECT_GT(with.a.requesters.cnps + with.b.requesters.cnps, 0u);
  EXPECT_GT(with.end, 3 * without.end) << "with " << with.end << " without " << without.end;
}

// The port's line rate with bursts: on the virtual wire, no host ever hands the port more than
// `pace_burst` frames at one instant, and each sends at the line rate, not above and not far below.
TEST(EnginePacingTest, HonoursLineRateAndBurstSize) {
  const uint64_t bytes = 1 << 20;
  for (uint32_t burst : {1u, 4u, 16u}) {
    FakeWire wire;
    const auto run = run_two_hosts(wire, {all_reduce(bytes)}, transport::Recovery::kGoBackN,
                                   10'000'000'000ull, false, [&](EngineConfig& c) {
                                     c.pace_gbps = 2;
                                     c.pace_burst = burst;
                                   });
    ASSERT_TRUE(run.failure.empty()) << run.failure;
    for (int side : {0, 1}) {
      EXPECT_LE(wire.max_same_instant[side], burst) << "burst " << burst;
      EXPECT_EQ(wire.max_same_instant[side], burst) << "an idle port may send a whole burst";
      const double frames = static_cast<double>(side == 0 ? run.a.tx_frames : run.b.tx_frames);
      const double line_bits =
          8.0 * (static_cast<double>(wire.bytes_submitted[side]) + frames * kEthernetLineOverhead);
      // Each side sends for the whole run (ring: both hosts send the same amount), so its average
      // rate is at most the line rate plus one burst, and the run is not much longer than that.
      const double gbps = line_bits / static_cast<double>(run.end);
      EXPECT_LE(gbps, 2.0 * 1.02) << "burst " << burst << " side " << side;
      EXPECT_GE(gbps, 2.0 * 0.8) << "burst " << burst << " side " << side;
    }
  }
}

TEST(EnginePacingTest, RejectsAZeroBurst) {
  FakeWire wire;
  EngineConfig config;
  config.pace_gbps = 1;
  config.pace_burst = 0;
  v1::TraceHeader header;
  header.set_world_size(2);
  auto* comm = header.add_communicators();
  comm->set_id("world");
  comm->add_ranks(0);
  comm->add_ranks(1);
  FakePort port(wire, 0, wire::MacAddress{});
  RankAddressing addressing;
  addressing.ip_of = [](uint32_t r) { return wire::Ipv4Address{0xc6120000u + r}; };
  addressing.next_hop_mac = [](uint32_t) { return wire::MacAddress{}; };
  auto e = Engine::create(config, header, *collectives::Placement::uniform(2, 1, 1), {}, {},
                          addressing, port, [] { return Nanos{0}; });
  EXPECT_THAT(e, StatusIs(StatusCode::kInvalidArgument));
}

// A port whose peer never answers, on a fake clock: its wait moves the clock on by the whole
// timeout (a real port sleeps that long), and every reading of the clock costs 100 ns, as a poll
// does. The engine must spend idle time in the wait (CI runs 8 agents on 2 cores): an engine that
// spun instead would reach its deadline only after hundreds of thousands of polls.
class SilentPort : public backend::PacketPort {
 public:
  Nanos read_clock() { return now += 100; }
  Status acquire(std::span<backend::Frame> frames) override {
    for (auto& f : frames) f = testing_frames::allocate(kCapacity);
    return {};
  }
  uint16_t submit(std::span<backend::Frame> frames) override {
    release(frames);
    return static_cast<uint16_t>(frames.size());
  }
  uint16_t receive(std::span<backend::Frame>) override {
    ++receives;
    return 0;
  }
  void release(std::span<backend::Frame> frames) override {
    for (auto& f : frames) testing_frames::free(f);
  }
  void wait_for_frames(std::chrono::microseconds timeout) override {
    ++waits;
    waited += std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
    now += static_cast<Nanos>(std::chrono::nanoseconds(timeout).count());
  }
  wire::MacAddress mac() const override { return {}; }
  uint32_t max_frame_size() const override { return kCapacity; }
  backend::PortCounters counters() const override { return {}; }
  std::string describe() const override { return "silent"; }
  uint64_t receives = 0;
  uint64_t waits = 0;
  std::chrono::nanoseconds waited{0};
  Nanos now = 0;

 private:
  static constexpr uint32_t kCapacity = 2048;
};

TEST(EngineIdleTest, WaitingForAPeerSleepsInsteadOfSpinning) {
  v1::TraceHeader header;
  header.set_world_size(2);
  auto* comm = header.add_communicators();
  comm->set_id("world");
  comm->add_ranks(0);
  comm->add_ranks(1);
  v1::Op op = all_reduce(1 << 20);
  op.set_rank(0);
  EngineConfig config;
  config.qp.mtu = 1024;
  config.qp.max_outstanding = 64;
  config.qp.timeout_exponent = 14;  // 67 ms: no timer fires during the test
  RankAddressing addressing;
  addressing.ip_of = [](uint32_t r) { return wire::Ipv4Address{0xc6120000u + r}; };
  addressing.next_hop_mac = [](uint32_t) { return wire::MacAddress{}; };
  SilentPort port;
  collectives::ExpandOptions expand;
  expand.channels = 1;
  auto engine = Engine::create(config, header, *collectives::Placement::uniform(2, 1, 1), expand,
                               {{0, {op}}}, addressing, port, [&port] { return port.read_clock(); });
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  const Status s = (*engine)->run(std::chrono::milliseconds(50));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.to_string();
  EXPECT_GE(port.now, 50'000'000u);
  EXPECT_GT(port.waits, 0u);
  // 500 us waits: about 100 in 50 ms. A spinning engine polls hundreds of thousands of times.
  EXPECT_LT(port.receives, 2000u) << "polls in " << port.now << " ns";
  // Nearly all of the 50 ms passed waiting for frames, not polling.
  EXPECT_GE(port.waited, std::chrono::milliseconds(45)) << port.waits << " waits";
}

// The slow-receiver hook: host B leaves its receive ring alone for 2 ms in the middle of an
// all-reduce that needs B at every step, so the whole job stalls for about that long.
TEST(EngineHooksTest, DrainPauseStallsTheJobForItsLength) {
  const uint64_t bytes = 4 << 20;
  // A window of 64 packets per QP, as NICs bound what is in flight: senders wait for ACKs the
  // paused host does not read, instead of pouring the whole op into the wire's queue.
  auto paced = [](EngineConfig& c) {
    c.pace_gbps = 10;
    c.qp.max_outstanding = 64;
  };
  FakeWire clean;
  const auto base = run_two_hosts(clean, {all_reduce(bytes)}, transport::Recovery::kGoBackN,
                                  10'000'000'000ull, false, paced);
  ASSERT_TRUE(base.failure.empty()) << base.failure;
  const Nanos pause = 2'000'000;
  ASSERT_GT(base.end, 2'000'000u) << "the pause must fall inside the op";
  FakeWire wire;
  const auto run = run_two_hosts(wire, {all_reduce(bytes)}, transport::Recovery::kGoBackN,
                                 10'000'000'000ull, false, paced, [&](EngineConfig& c) {
                                   c.drain_pauses.push_back(
                                       {std::chrono::milliseconds(1), std::chrono::nanoseconds(pause), {}});
                                 });
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  EXPECT_EQ(run.a.rx_paused_polls, 0u);
  EXPECT_GT(run.b.rx_paused_polls, 0u);
  const double stall = static_cast<double>(run.end) - static_cast<double>(base.end);
  std::cout << "baseline " << base.end / 1e6 << " ms, with a 2 ms drain pause " << run.end / 1e6
            << " ms\n";
  EXPECT_GT(stall, 0.8 * static_cast<double>(pause));
  EXPECT_LT(stall, 1.3 * static_cast<double>(pause));
  // Nothing was lost (the fake wire queues what waits), so nothing was resent.
  EXPECT_EQ(run.a.requesters.retransmitted_packets + run.b.requesters.retransmitted_packets, 0u);
}

// Lossless receive: host B falls 1 ms behind (a drain pause) in the middle of an all-reduce, with
// receive rings of 64 frames on both sides. Without lossless, what A keeps sending overflows B's
// ring and is lost; with it, B takes frames into its hold, pauses A (which honours the pause)
// from xoff on, refreshes the pause until it catches up, resumes A once, and nothing is lost.
struct LosslessRun {
  TwoHostRun run;
  FakeWire wire;
};

constexpr Nanos kDrainStart = 500'000;  // the op takes about 1.4 ms on this wire unpaused
constexpr Nanos kDrainLength = 1'000'000;
constexpr double kLosslessLineGbps = 10;
constexpr uint64_t kLosslessBytes = 1 << 20;

// `drain_buffer`: B's NIC buffer (EngineConfig.drain_buffer_frames; 0: none), in front of a ring
// of `ring` frames.
LosslessRun run_slow_receiver(bool lossless, uint32_t drain_buffer = 0, size_t ring = 64) {
  LosslessRun out;
  out.wire.ring_frames = ring;
  auto paced = [](EngineConfig& c) {
    c.pace_gbps = kLosslessLineGbps;
    c.pfc.line_gbps = kLosslessLineGbps;
    c.qp.max_outstanding = 64;
    // 16.8 ms: a QP that waits out the stall unacknowledged (the pacer lets one frame go per
    // poll, so the first QPs in order go first) must not time out and resend what B holds.
    c.qp.timeout_exponent = 12;
  };
  out.run = run_two_hosts(out.wire, {all_reduce(kLosslessBytes)}, transport::Recovery::kGoBackN,
                          10'000'000'000ull, false, paced, [&](EngineConfig& c) {
                            paced(c);
                            c.drain_pauses.push_back({std::chrono::nanoseconds(kDrainStart),
                                                      std::chrono::nanoseconds(kDrainLength), {}});
                            c.lossless.enabled = lossless;
                            c.lossless.priority = 3;
                            c.lossless.xoff_frames = 16;
                            c.lossless.xon_frames = 4;
                            c.lossless.quanta = 1000;  // 51.2 us at 10 Gb/s
                            c.drain_buffer_frames = drain_buffer;
                          });
  return out;
}

TEST(EngineLosslessTest, ASlowReceiverPausesItsSenderInsteadOfDropping) {
  const LosslessRun r = run_slow_receiver(true);
  const TwoHostRun& run = r.run;
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  ASSERT_EQ(run.records.size(), 4u);
  EXPECT_GT(run.b.rx_held_frames, 0u);
  // Nothing lost in B's ring (nor A's), nothing resent, and every payload byte arrived once.
  EXPECT_EQ(r.wire.ring_dropped[1], 0u);
  EXPECT_EQ(r.wire.ring_dropped[0], 0u);
  EXPECT_EQ(run.a.requesters.retransmitted_packets + run.b.requesters.retransmitted_packets, 0u);
  const uint64_t crossing = 2 * (2 * 3 * (kLosslessBytes / 4));
  EXPECT_EQ(run.a.responders.bytes_received + run.b.responders.bytes_received, crossing);
  EXPECT_EQ(run.a.responders.duplicates + run.b.responders.duplicates, 0u);
  EXPECT_EQ(run.a.pattern_errors + run.b.pattern_errors, 0u);
  // B's flow control: pauses of priority 3 for 1000 quanta from its own MAC to the MAC control
  // address, refreshed at half their 51.2 us while the drain pause lasts, then one resume.
  const auto& sent = r.wire.control_sent[1];
  ASSERT_GE(sent.size(), 3u);
  const auto mac_b = *wire::MacAddress::parse("02:00:00:00:00:0b");
  std::vector<Nanos> pauses;
  size_t resumes = 0;
  for (size_t i = 0; i < sent.size(); ++i) {
    const auto& [at, bytes] = sent[i];
    EXPECT_TRUE(std::equal(wire::kMacControlDestination.bytes.begin(),
                           wire::kMacControlDestination.bytes.end(), bytes.begin()));
    auto f = wire::decode_pause(bytes);
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    EXPECT_FALSE(f->link_pause);
    EXPECT_EQ(f->source, mac_b);
    EXPECT_EQ(f->enabled, 1 << 3);
    if (f->quanta[3] == 0) {
      ++resumes;
      EXPECT_EQ(i, sent.size() - 1) << "the resume is the last frame";
      EXPECT_GE(at, kDrainStart + kDrainLength) << "resumed before B caught up";
    } else {
      EXPECT_EQ(f->quanta[3], 1000);
      EXPECT_GE(at, kDrainStart);
      pauses.push_back(at);
    }
  }
  EXPECT_EQ(resumes, 1u);
  const Nanos pause_ns = wire::pause_quanta_ns(1000, kLosslessLineGbps);
  for (size_t i = 1; i < pauses.size(); ++i) {
    EXPECT_LT(pauses[i] - pauses[i - 1], pause_ns) << "pause " << i << " came after one ran out";
  }
  // Paused for the whole drain pause: a pause every 25.6 us of it.
  EXPECT_GE(pauses.size(), kDrainLength / (pause_ns / 2) - 2);
  EXPECT_EQ(run.b.pause_frames_sent, sent.size());
  EXPECT_EQ(run.a.pause_frames_sent, 0u);
  EXPECT_TRUE(r.wire.control_sent[0].empty());
  // A honoured every one (the resume included) and held its sending meanwhile.
  EXPECT_EQ(run.a.pause_frames, sent.size());
  EXPECT_GT(run.a.paused_ns, kDrainLength * 9 / 10);
}

TEST(EngineLosslessTest, WithoutLosslessTheSlowReceiverDropsAndSendsNoPause) {
  const LosslessRun r = run_slow_receiver(false);
  ASSERT_TRUE(r.run.failure.empty()) << r.run.failure;
  ASSERT_EQ(r.run.records.size(), 4u);
  EXPECT_TRUE(r.wire.control_sent[0].empty());
  EXPECT_TRUE(r.wire.control_sent[1].empty());
  EXPECT_EQ(r.run.b.pause_frames_sent, 0u);
  EXPECT_EQ(r.run.b.rx_held_frames, 0u);
  EXPECT_EQ(r.run.a.pause_frames, 0u);
  // B's ring overflowed and recovery resent what it lost.
  EXPECT_GT(r.wire.ring_dropped[1], 0u);
  EXPECT_GT(r.run.a.requesters.retransmitted_packets, 0u);
}

// With B's NIC buffer modelled (32 frames) in front of a ring that never fills: the NIC keeps 32
// frames, drops and counts what else arrives, the ring loses nothing, and recovery resends it all.
TEST(EngineLosslessTest, ASlowReceiversFullNicBufferDropsAndCountsWhatArrives) {
  const LosslessRun r = run_slow_receiver(false, 32, 4096);
  ASSERT_TRUE(r.run.failure.empty()) << r.run.failure;
  ASSERT_EQ(r.run.records.size(), 4u);
  EXPECT_EQ(r.wire.ring_dropped[1], 0u);
  EXPECT_GE(r.run.b.rx_held_frames, 32u);
  EXPECT_GT(r.run.b.rx_buffer_dropped, 0u);
  EXPECT_EQ(r.run.b.pause_frames_sent, 0u);
  EXPECT_GT(r.run.a.requesters.retransmitted_packets, 0u);
  const uint64_t crossing = 2 * (2 * 3 * (kLosslessBytes / 4));
  EXPECT_EQ(r.run.a.responders.bytes_received + r.run.b.responders.bytes_received, crossing);
  EXPECT_EQ(r.run.a.pattern_errors + r.run.b.pattern_errors, 0u);
}

// The same buffer, lossless with xoff at 16 frames: B pauses A before its buffer fills, and
// nothing is dropped anywhere.
TEST(EngineLosslessTest, ALosslessNicPausesBeforeItsBufferFills) {
  const LosslessRun r = run_slow_receiver(true, 32, 4096);
  ASSERT_TRUE(r.run.failure.empty()) << r.run.failure;
  EXPECT_GT(r.run.b.rx_held_frames, 0u);
  EXPECT_EQ(r.run.b.rx_buffer_dropped, 0u);
  EXPECT_GT(r.run.b.pause_frames_sent, 0u);
  EXPECT_EQ(r.run.a.requesters.retransmitted_packets + r.run.b.requesters.retransmitted_packets, 0u);
}

TEST(EngineLosslessTest, ANicBufferWithNoRoomAboveXoffIsRefused) {
  EngineConfig c;
  c.lossless.enabled = true;
  c.lossless.xoff_frames = 16;
  c.lossless.xon_frames = 4;
  EXPECT_THAT(validate_drain_buffer(16, c.lossless), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_TRUE(validate_drain_buffer(17, c.lossless).ok());
  EXPECT_THAT(validate_drain_buffer(kMaxDrainBufferFrames + 1, LosslessConfig{}),
              StatusIs(StatusCode::kInvalidArgument));
}

// The slow-sender hook on a single message: rank 0 (host A) sends one packet to rank 2 (host B).
// Held for D on A's side, it arrives, and its ACK returns, exactly D later; a delay on B holds
// only the ACK, so only the send completes later.
TEST(EngineHooksTest, SendDelayShiftsCompletionByTheDelay) {
  v1::Op send;
  send.set_kind(v1::OP_KIND_SEND);
  send.set_comm("world");
  send.set_bytes(1024);
  send.set_root(2);
  send.set_rank(0);
  v1::Op recv = send;
  recv.set_kind(v1::OP_KIND_RECV);
  recv.set_root(0);
  recv.set_rank(2);
  const std::map<uint32_t, std::vector<v1::Op>> programs = {{0, {send}}, {2, {recv}}};
  auto end_of = [](const TwoHostRun& run, uint32_t rank) {
    for (const OpRecord& r : run.records) {
      if (r.rank == rank) return r.end_ns;
    }
    return Nanos{0};
  };
  const Nanos delay = 300'000;
  auto delayed = [&](EngineConfig& c) {
    c.send_delays.push_back({std::chrono::nanoseconds(0), std::chrono::nanoseconds(0),
                             std::chrono::nanoseconds(delay), {}});
  };
  FakeWire w0, w1, w2;
  const auto base = run_two_hosts(w0, {}, transport::Recovery::kGoBackN, 10'000'000'000ull, false,
                                  {}, {}, &programs);
  const auto on_a = run_two_hosts(w1, {}, transport::Recovery::kGoBackN, 10'000'000'000ull, false,
                                  delayed, [](EngineConfig& c) { c.send_delays.clear(); }, &programs);
  const auto on_b = run_two_hosts(w2, {}, transport::Recovery::kGoBackN, 10'000'000'000ull, false,
                                  {}, delayed, &programs);
  for (const auto* r : {&base, &on_a, &on_b}) {
    ASSERT_TRUE(r->failure.empty()) << r->failure;
    ASSERT_EQ(r->records.size(), 2u);
  }
  EXPECT_EQ(end_of(on_a, 2) - end_of(base, 2), delay);  // the data arrived D later
  EXPECT_EQ(end_of(on_a, 0) - end_of(base, 0), delay);  // and so did its ACK
  EXPECT_EQ(end_of(on_b, 2), end_of(base, 2));          // B's delay holds only the ACK
  EXPECT_EQ(end_of(on_b, 0) - end_of(base, 0), delay);
  EXPECT_GT(on_a.a.tx_delayed_frames, 0u);
  EXPECT_EQ(on_a.b.tx_delayed_frames, 0u);
}

INSTANTIATE_TEST_SUITE_P(Recoveries, EngineTest,
                         ::testing::Values(transport::Recovery::kGoBackN,
                                           transport::Recovery::kSelectiveRepeat,
                                           transport::Recovery::kOutOfOrder),
                         [](const auto& info) {
                           switch (info.param) {
                             case transport::Recovery::kGoBackN: return "GoBackN";
                             case transport::Recovery::kSelectiveRepeat: return "SelectiveRepeat";
                             case transport::Recovery::kOutOfOrder: return "OutOfOrder";
                           }
                           return "Unknown";
                         });

// Selective ACKs cross the wire as frames (PSNs cut to 24 bits and unwrapped again): with every
// 7th frame overtaken, the out-of-order mode keeps and acknowledges what arrives past a hole and
// resends nothing, where go-back-N takes each overtaken frame for a loss.
TEST(EngineReorderingTest, OutOfOrderModeResendsNothingWhenFramesAreOnlyReordered) {
  const uint64_t bytes = 4 << 20;
  const uint64_t crossing = 2 * (2 * 3 * (bytes / 4));
  auto sprayed_run = [&](transport::Recovery recovery) {
    FakeWire sprayed;
    sprayed.late_every = 7;
    sprayed.late_ns = 3'000;
    // Paced, so that a late frame is overtaken by a few frames, not by a whole window at once.
    return run_two_hosts(sprayed, {all_reduce(bytes)}, recovery, 10'000'000'000ull, false,
                         [](EngineConfig& c) {
                           c.pace_gbps = 10;
                           c.pace_burst = 1;
                         });
  };
  const auto ooo = sprayed_run(transport::Recovery::kOutOfOrder);
  ASSERT_TRUE(ooo.failure.empty()) << ooo.failure;
  EXPECT_GT(ooo.a.responders.out_of_order + ooo.b.responders.out_of_order, 100u);
  EXPECT_EQ(ooo.a.requesters.retransmitted_packets + ooo.b.requesters.retransmitted_packets, 0u);
  EXPECT_EQ(ooo.a.requesters.naks + ooo.b.requesters.naks, 0u);
  EXPECT_EQ(ooo.a.responders.bytes_received + ooo.b.responders.bytes_received, crossing);
  EXPECT_EQ(ooo.a.pattern_errors + ooo.b.pattern_errors, 0u);

  const auto gbn = sprayed_run(transport::Recovery::kGoBackN);
  ASSERT_TRUE(gbn.failure.empty()) << gbn.failure;
  EXPECT_GT(gbn.a.requesters.retransmitted_packets + gbn.b.requesters.retransmitted_packets, 100u);
  EXPECT_EQ(gbn.a.responders.bytes_received + gbn.b.responders.bytes_received, crossing);
}

// A frame finds its connection by the slot its QP number decodes to: a frame for a QP number the
// engine never gives (here one without the top bit, and one whose channel the job does not have)
// is foreign and makes no connection, while one on a QP the numbering gives is answered.
TEST(EngineFrameLookupTest, AFrameForAQpNumberTheEngineNeverGivesIsForeign) {
  v1::TraceHeader header;
  header.set_world_size(4);
  auto* comm = header.add_communicators();
  comm->set_id("world");
  for (uint32_t r = 0; r < 4; ++r) comm->add_ranks(r);
  collectives::ExpandOptions expand;
  expand.channels = 2;
  expand.qps_per_connection = 2;
  RankAddressing addressing;
  addressing.ip_of = [](uint32_t r) { return wire::Ipv4Address{0xc6120000u + 10 + r}; };
  const auto mac_a = *wire::MacAddress::parse("02:00:00:00:00:0a");
  addressing.next_hop_mac = [&](uint32_t) { return mac_a; };
  FakeWire wire;
  FakePort port(wire, 0, mac_a);
  std::map<uint32_t, std::vector<v1::Op>> programs = {{0, {}}, {1, {}}};
  auto engine = Engine::create(EngineConfig{}, header, *collectives::Placement::uniform(4, 2, 1),
                               expand, programs, addressing, port, [&] { return wire.now; });
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  auto send_to_rank0 = [&](uint32_t qpn) {
    transport::Packet p;
    p.qpn = qpn;
    p.opcode = wire::Opcode::kWriteOnly;
    p.payload_bytes = 64;
    p.message_bytes = 64;
    p.ack_request = true;
    transport::FrameAddress a;
    a.dst_mac = mac_a;
    a.src_ip = addressing.ip_of(2);
    a.dst_ip = addressing.ip_of(0);
    std::vector<uint8_t> frame(512);
    auto len = transport::encode_frame(frame, p, a, true);
    ASSERT_TRUE(len.ok()) << len.status().to_string();
    frame.resize(*len);
    wire.queue[0].push_back({wire.now, frame});
    (*engine)->poll();
  };
  send_to_rank0(0x000101);             // no top bit: QP1's range, never an engine's
  send_to_rank0((1u << 23) | (5u << 8));  // channel 5 of a 2-channel job
  EXPECT_EQ((*engine)->counters().rx_foreign, 2u);
  EXPECT_TRUE((*engine)->qp_counters().empty());
  send_to_rank0((1u << 23) | (1u << 8) | 1u);  // world, channel 1, QP 1
  EXPECT_EQ((*engine)->counters().rx_foreign, 2u);
  ASSERT_EQ((*engine)->qp_counters().size(), 1u);
  EXPECT_EQ((*engine)->qp_counters()[0].peer, 2u);
  EXPECT_EQ((*engine)->qp_counters()[0].responder.bytes_received, 64u);
}

TEST(FlowTagCodecTest, RoundTripsAndRejectsOverflow) {
  collectives::FlowTag tag{true, 12345, 3, 250, 77};
  auto packed = pack_flow_tag(tag);
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ(unpack_flow_tag(*packed, 3), tag);
  tag.slice = 1u << 20;
  EXPECT_THAT(pack_flow_tag(tag), StatusIs(StatusCode::kInvalidArgument));
}

TEST(FlowTagCodecTest, CarriesThePxnOriginAndNotTheNvlinkHop) {
  // A relay's own transfer and the one it carries on for its host-mate differ only by origin.
  collectives::FlowTag own{false, (1u << 25) - 1, 1, (1u << 15) - 1, (1u << 15) - 1};
  collectives::FlowTag relayed = own;
  relayed.relay_from = 255;
  auto a = pack_flow_tag(own);
  auto b = pack_flow_tag(relayed);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(unpack_flow_tag(*b, 1), relayed);
  EXPECT_EQ(unpack_flow_tag(*a, 1), own);
  relayed.relay_from = 256;
  EXPECT_THAT(pack_flow_tag(relayed), StatusIs(StatusCode::kInvalidArgument));
  collectives::FlowTag hop = own;
  hop.relay_to = 9;
  EXPECT_EQ(pack_flow_tag(hop).value(), *a);
}

}  // namespace
}  // namespace collide::replayer::engine
