#include "replayer/engine/host_engines.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "replayer/engine/heap_frame_for_tests.h"

namespace collide::replayer::engine {
namespace {

using transport::Nanos;

// An Ethernet switch in memory for engines on several threads: a frame goes, whole and at once,
// to the port whose MAC is its destination; frames to no port are lost.
class MemorySwitch {
 public:
  using Mac = std::array<uint8_t, 6>;
  class Port : public backend::PacketPort {
   public:
    Port(MemorySwitch& sw, wire::MacAddress mac) : switch_(sw), mac_(mac) {}
    Status acquire(std::span<backend::Frame> frames) override {
      for (auto& f : frames) f = testing_frames::allocate(kCapacity);
      return {};
    }
    uint16_t submit(std::span<backend::Frame> frames) override {
      for (auto& f : frames) {
        wire::MacAddress to;
        std::copy(f.data, f.data + 6, to.bytes.begin());
        switch_.forward(to, std::vector<uint8_t>(f.data, f.data + f.len));
        free(f);
      }
      return static_cast<uint16_t>(frames.size());
    }
    uint16_t receive(std::span<backend::Frame> frames) override {
      std::lock_guard lock(mutex_);
      uint16_t n = 0;
      while (n < frames.size() && !queue_.empty()) {
        frames[n] = testing_frames::allocate(kCapacity);
        std::copy(queue_.front().begin(), queue_.front().end(), frames[n].data);
        frames[n].len = static_cast<uint32_t>(queue_.front().size());
        queue_.pop_front();
        ++n;
      }
      return n;
    }
    void release(std::span<backend::Frame> frames) override {
      for (auto& f : frames) free(f);
    }
    void wait_for_frames(std::chrono::microseconds timeout) override {
      std::unique_lock lock(mutex_);
      arrived_.wait_for(lock, timeout, [&] { return !queue_.empty(); });
    }
    wire::MacAddress mac() const override { return mac_; }
    uint32_t max_frame_size() const override { return kCapacity; }
    backend::PortCounters counters() const override { return {}; }
    std::string describe() const override { return "memory switch port " + mac_.to_string(); }
    size_t queue_count() const override { return queues_.empty() ? 1 : queues_.size(); }
    PacketPort& queue(size_t index) override { return queues_.empty() ? *this : *queues_[index]; }

    // Gives the port `n` queues that share its MAC, each a port of its own. A frame for the MAC
    // goes to queue (UDP source port & (n - 1)), as a NIC's flow rules steer RoCE QPs by it.
    void add_queues(uint32_t n) {
      for (uint32_t q = 0; q < n; ++q) queues_.push_back(std::make_unique<Port>(switch_, mac_));
    }
    uint64_t frames_delivered() const {
      std::lock_guard lock(mutex_);
      return delivered_;
    }

    void deliver(std::vector<uint8_t> frame) {
      if (!queues_.empty()) {
        constexpr size_t kUdpSourcePort = 14 + 20;
        const bool udp = frame.size() > kUdpSourcePort + 2 && frame[12] == 0x08 &&
                         frame[13] == 0x00 && frame[14 + 9] == 17;
        const uint32_t port = udp ? (frame[kUdpSourcePort] << 8 | frame[kUdpSourcePort + 1]) : 0;
        return queues_[port & (queues_.size() - 1)]->deliver(std::move(frame));
      }
      {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(frame));
        ++delivered_;
      }
      arrived_.notify_one();
    }

   private:
    static constexpr uint32_t kCapacity = 9216;
    static void free(backend::Frame& f) { testing_frames::free(f); }
    MemorySwitch& switch_;
    wire::MacAddress mac_;
    mutable std::mutex mutex_;
    std::condition_variable arrived_;
    std::deque<std::vector<uint8_t>> queue_;
    uint64_t delivered_ = 0;
    std::vector<std::unique_ptr<Port>> queues_;
  };

  // Ports are added before any engine runs.
  Port& add(wire::MacAddress mac) {
    ports_.push_back(std::make_unique<Port>(*this, mac));
    return *ports_.back();
  }
  void forward(const wire::MacAddress& to, std::vector<uint8_t> frame) {
    {
      Mac from;
      std::copy(frame.begin() + 6, frame.begin() + 12, from.begin());
      std::lock_guard lock(links_mutex_);
      ++links_[{from, to.bytes}];
    }
    for (auto& p : ports_) {
      if (p->mac() == to) return p->deliver(std::move(frame));
    }
  }
  // Frames forwarded, by (source MAC, destination MAC).
  std::map<std::pair<Mac, Mac>, uint64_t> links() const {
    std::lock_guard lock(links_mutex_);
    return links_;
  }

 private:
  std::vector<std::unique_ptr<Port>> ports_;
  mutable std::mutex links_mutex_;
  std::map<std::pair<Mac, Mac>, uint64_t> links_;
};

constexpr uint32_t kHosts = 2;
constexpr uint32_t kNicsPerHost = 2;
uint32_t world_of(uint32_t ranks_per_host) { return kHosts * ranks_per_host; }

wire::MacAddress mac_of(uint32_t host, uint32_t nic) {
  return wire::MacAddress{{0x02, 0, 0, 0, static_cast<uint8_t>(host), static_cast<uint8_t>(nic)}};
}

v1::TraceHeader world_header(uint32_t ranks_per_host) {
  const uint32_t world = world_of(ranks_per_host);
  v1::TraceHeader header;
  header.set_world_size(world);
  auto* comm = header.add_communicators();
  comm->set_id("world");
  for (uint32_t r = 0; r < world; ++r) comm->add_ranks(r);
  return header;
}

v1::Op op(v1::OpKind kind, uint64_t bytes, uint32_t rank, uint64_t index, uint32_t root = 0) {
  v1::Op o;
  o.set_kind(kind);
  o.set_comm("world");
  o.set_bytes(bytes);
  o.set_rank(rank);
  o.set_index(index);
  o.set_root(root);
  return o;
}

// Every rank all-reduces (its ring crosses NICs inside a host and the network between hosts),
// then sends to the rank on the other NIC of its host (0->1, 1->0, ...: steps between engines),
// then rank 1 sends to the second-last rank (on host 1) over the network.
std::map<uint32_t, std::vector<v1::Op>> programs_of_host(uint32_t host, uint32_t ranks_per_host) {
  std::map<uint32_t, std::vector<v1::Op>> p;
  const uint32_t far = world_of(ranks_per_host) - 2;
  for (uint32_t r = host * ranks_per_host; r < (host + 1) * ranks_per_host; ++r) {
    const uint32_t partner = r ^ 1u;
    p[r].push_back(op(v1::OP_KIND_ALL_REDUCE, 1 << 20, r, 0));
    // Lower rank sends first, so the pair does not wait on each other.
    if (r < partner) {
      p[r].push_back(op(v1::OP_KIND_SEND, 96 << 10, r, 1, partner));
      p[r].push_back(op(v1::OP_KIND_RECV, 96 << 10, r, 2, partner));
    } else {
      p[r].push_back(op(v1::OP_KIND_RECV, 96 << 10, r, 1, partner));
      p[r].push_back(op(v1::OP_KIND_SEND, 96 << 10, r, 2, partner));
    }
  }
  if (host == 0) p[1].push_back(op(v1::OP_KIND_SEND, 200 << 10, 1, 3, far));
  if (host == 1) p[far].push_back(op(v1::OP_KIND_RECV, 200 << 10, far, 3, 1));
  return p;
}

struct JobSetup {
  uint32_t ranks_per_host;
  collectives::Placement placement;
  collectives::ExpandOptions expand;
  EngineConfig config;
  explicit JobSetup(uint32_t ranks)
      : ranks_per_host(ranks),
        placement(*collectives::Placement::uniform(world_of(ranks), ranks, kNicsPerHost)) {
    expand.channels = 2;
    expand.slice_bytes = 64 * 1024;
    expand.qps_per_connection = 2;
    config.qp.mtu = 1024;
    config.qp.timeout_exponent = 10;  // 4 ms
  }
  RankAddressing addressing(bool by_nic) const {
    RankAddressing a;
    a.ip_of = [](uint32_t r) { return wire::Ipv4Address{0xc6120000u + 10 + r}; };
    a.next_hop_mac = [p = placement, by_nic](uint32_t r) {
      return mac_of(p.host_of_rank[r], by_nic ? p.nic_of_rank[r] : 0);
    };
    return a;
  }
};

Engine::Clock steady_clock() {
  return [] {
    return static_cast<Nanos>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now().time_since_epoch())
                                  .count());
  };
}

using RecordKey = std::tuple<uint32_t, uint64_t, int, std::string, uint64_t, uint64_t, bool>;

std::vector<RecordKey> keys(const std::vector<OpRecord>& records) {
  std::vector<RecordKey> out;
  for (const OpRecord& r : records) {
    out.emplace_back(r.rank, r.op_index, r.kind, r.comm, r.bytes, r.network_bytes, r.failed);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Outcome {
  std::vector<OpRecord> records;
  EngineCounters counters;
  std::vector<Status> status;
  std::map<uint32_t, EngineCounters> host0_nics;  // host 0's counters by NIC
};

// Each host as one engine over one NIC: what the engine did before hosts had engines per NIC.
Outcome run_one_engine_per_host(uint32_t ranks_per_host) {
  JobSetup s(ranks_per_host);
  MemorySwitch sw;
  std::vector<std::unique_ptr<Engine>> engines;
  for (uint32_t h = 0; h < kHosts; ++h) {
    auto e = Engine::create(s.config, world_header(ranks_per_host), s.placement, s.expand,
                            programs_of_host(h, ranks_per_host),
                            s.addressing(false), sw.add(mac_of(h, 0)), steady_clock());
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    engines.push_back(std::move(e).value());
  }
  Outcome out;
  out.status.resize(kHosts);
  std::vector<std::thread> threads;
  for (uint32_t h = 0; h < kHosts; ++h) {
    threads.emplace_back([&, h] { out.status[h] = engines[h]->run(std::chrono::seconds(20)); });
  }
  for (auto& t : threads) t.join();
  for (auto& e : engines) {
    for (OpRecord& r : e->take_records()) out.records.push_back(r);
    out.counters += e->counters();
  }
  return out;
}

// Queues per NIC (an engine each) and whether QPs' source ports name their lane.
struct Lanes {
  uint32_t queues = 1;
  bool steer = false;
  uint32_t channels = 2;
};

Outcome run_engines_per_nic(uint32_t ranks_per_host,
                            const std::map<uint32_t, std::vector<v1::Op>>& host0_programs,
                            bool host1_runs, std::chrono::seconds timeout,
                            const std::vector<int>& cores = {}, Lanes lanes = {},
                            std::vector<uint64_t>* frames_per_queue = nullptr,
                            const std::vector<DrainPause>& host0_drain_pauses = {}) {
  JobSetup s(ranks_per_host);
  s.config.steer_lanes = lanes.steer;
  s.expand.channels = lanes.channels;
  // A held receive ring is silence to its senders: their resends must outlast the pause (7 of
  // 67 ms attempts), not give up after the default's 29 ms as a dead peer.
  if (!host0_drain_pauses.empty()) s.config.qp.timeout_exponent = 14;
  MemorySwitch sw;
  std::vector<std::unique_ptr<HostEngines>> hosts;
  std::vector<MemorySwitch::Port*> all_ports;
  for (uint32_t h = 0; h < (host1_runs ? kHosts : 1); ++h) {
    std::vector<backend::PacketPort*> ports;
    for (uint32_t n = 0; n < kNicsPerHost; ++n) {
      MemorySwitch::Port& port = sw.add(mac_of(h, n));
      if (lanes.queues > 1) port.add_queues(lanes.queues);
      ports.push_back(&port);
      all_ports.push_back(&port);
    }
    EngineConfig config = s.config;
    if (h == 0) config.drain_pauses = host0_drain_pauses;
    auto g = HostEngines::create(config, world_header(ranks_per_host), s.placement, s.expand,
                                 h == 0 ? host0_programs : programs_of_host(h, ranks_per_host),
                                 std::vector<RankAddressing>(kNicsPerHost, s.addressing(true)), ports,
                                 steady_clock());
    EXPECT_TRUE(g.ok()) << g.status().to_string();
    EXPECT_EQ((*g)->engine_count(), kNicsPerHost * lanes.queues);
    hosts.push_back(std::move(g).value());
  }
  Outcome out;
  out.status.resize(hosts.size());
  std::vector<std::thread> threads;
  for (size_t h = 0; h < hosts.size(); ++h) {
    threads.emplace_back([&, h] { HostRunControl control;
      control.cores = cores;
      out.status[h] = hosts[h]->run(timeout, control);
    });
  }
  for (auto& t : threads) t.join();
  for (auto& g : hosts) {
    for (OpRecord& r : g->take_records()) out.records.push_back(r);
    out.counters += g->counters();
  }
  for (uint32_t nic : hosts[0]->nics()) out.host0_nics[nic] = hosts[0]->counters_of_nic(nic);
  if (frames_per_queue != nullptr) {
    for (MemorySwitch::Port* port : all_ports) {
      for (size_t q = 0; q < port->queue_count(); ++q) {
        frames_per_queue->push_back(static_cast<MemorySwitch::Port&>(port->queue(q)).frames_delivered());
      }
    }
  }
  return out;
}

// Hosts of 2 ranks (one per NIC) and of 4 (two per NIC: local steps inside an engine too).
class HostEnginesShapeTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(HostEnginesShapeTest, EnginePerNicGivesTheRecordsOfOneEnginePerHost) {
  const uint32_t ranks = GetParam();
  const Outcome one = run_one_engine_per_host(ranks);
  const Outcome per_nic =
      run_engines_per_nic(ranks, programs_of_host(0, ranks), true, std::chrono::seconds(20));
  for (const Status& st : one.status) ASSERT_TRUE(st.ok()) << st.to_string();
  for (const Status& st : per_nic.status) ASSERT_TRUE(st.ok()) << st.to_string();
  // An all-reduce, a send and a receive between the NICs of a host per rank, and one send and
  // receive over the network; none failed, each the same as the single engine recorded it.
  ASSERT_EQ(per_nic.records.size(), world_of(ranks) * 3 + 2);
  for (const OpRecord& r : per_nic.records) EXPECT_FALSE(r.failed) << r.failure;
  EXPECT_EQ(keys(per_nic.records), keys(one.records));
  // The same payload bytes crossed the network, every one verified against its pattern.
  EXPECT_GT(per_nic.counters.responders.bytes_received, 200u << 10);
  EXPECT_EQ(per_nic.counters.responders.bytes_received, one.counters.responders.bytes_received);
  EXPECT_EQ(per_nic.counters.pattern_errors, 0u);
  EXPECT_EQ(per_nic.counters.icrc_errors, 0u);
  EXPECT_EQ(per_nic.counters.rx_foreign, 0u);
}

// A host's counters are its engines' sums, the flow control ones included.
TEST(HostEnginesTest, CountersOfEnginesAddUpFlowControlToo) {
  EngineCounters one;
  one.pause_frames = 1;
  one.paused_ns = 10;
  one.pause_frames_sent = 3;
  one.rx_held_frames = 5;
  EngineCounters total;
  total += one;
  total += one;
  EXPECT_EQ(total.pause_frames, 2u);
  EXPECT_EQ(total.paused_ns, 20u);
  EXPECT_EQ(total.pause_frames_sent, 6u);
  EXPECT_EQ(total.rx_held_frames, 10u);
}

TEST(HostEnginesTest, OneEngineFailingStopsTheOthers) {
  // Host 1 is down: rank 0 (NIC 0) sends into the void until its QP gives up, while rank 1
  // (NIC 1) waits for a receive that never comes and is stopped with it.
  std::map<uint32_t, std::vector<v1::Op>> programs;
  programs[0].push_back(op(v1::OP_KIND_SEND, 4096, 0, 0, 4));
  programs[1].push_back(op(v1::OP_KIND_RECV, 4096, 1, 0, 5));
  const auto start = std::chrono::steady_clock::now();
  const Outcome out = run_engines_per_nic(4, programs, false, std::chrono::seconds(20));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_EQ(out.status.size(), 1u);
  EXPECT_NE(out.status[0].message().find("IBV_WC_RETRY_EXC_ERR"), std::string::npos)
      << out.status[0].to_string();
  ASSERT_EQ(out.records.size(), 2u);
  for (const OpRecord& r : out.records) {
    EXPECT_TRUE(r.failed) << "rank " << r.rank;
    EXPECT_NE(r.failure.find("IBV_WC_RETRY_EXC_ERR"), std::string::npos) << r.failure;
  }
}

INSTANTIATE_TEST_SUITE_P(RanksPerHost, HostEnginesShapeTest, ::testing::Values(2u, 4u));

TEST(HostEnginesTest, RunsPinnedToTheCoresGiven) {
  const int second = std::thread::hardware_concurrency() > 1 ? 1 : 0;
  const Outcome one = run_one_engine_per_host(4);
  const Outcome pinned =
      run_engines_per_nic(4, programs_of_host(0, 4), true, std::chrono::seconds(20), {0, second});
  for (const Status& st : pinned.status) ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(keys(pinned.records), keys(one.records));
}

TEST(HostEnginesTest, ACoreThatIsNotThereFailsTheRunAndSaysWhich) {
  const Outcome out =
      run_engines_per_nic(4, programs_of_host(0, 4), false, std::chrono::seconds(20), {0, 1000});
  ASSERT_EQ(out.status.size(), 1u);
  EXPECT_NE(out.status[0].message().find("core 1000"), std::string::npos)
      << out.status[0].to_string();
  for (const OpRecord& r : out.records) EXPECT_TRUE(r.failed) << "rank " << r.rank;
}

TEST(HostEnginesTest, RejectsARankOnANicWithoutAPort) {
  JobSetup s(4);
  MemorySwitch sw;
  std::vector<backend::PacketPort*> ports{&sw.add(mac_of(0, 0))};
  auto g = HostEngines::create(s.config, world_header(4), s.placement, s.expand,
                               programs_of_host(0, 4), {s.addressing(true)}, ports, steady_clock());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("NIC 1"), std::string::npos) << g.status().to_string();
}

TEST(HostEnginesTest, AStopFromOutsideEndsEveryEngineAndProgressIsPublished) {
  // Host 1 never answers, so host 0's engines would wait for seconds; a stop ends them at once.
  JobSetup s(4);
  s.config.qp.timeout_exponent = 16;  // 268 ms per attempt: far longer than the test waits
  MemorySwitch sw;
  std::vector<backend::PacketPort*> ports{&sw.add(mac_of(0, 0)), &sw.add(mac_of(0, 1))};
  std::map<uint32_t, std::vector<v1::Op>> programs;
  programs[0].push_back(op(v1::OP_KIND_SEND, 64 << 10, 0, 0, 4));
  programs[1].push_back(op(v1::OP_KIND_SEND, 64 << 10, 1, 0, 5));
  auto g = HostEngines::create(s.config, world_header(4), s.placement, s.expand, programs,
                               std::vector<RankAddressing>(2, s.addressing(true)), ports,
                               steady_clock());
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  std::atomic<bool> stop{false};
  Status result;
  std::thread runner([&] { HostRunControl control;
    control.stop = &stop;
    result = (*g)->run(std::chrono::seconds(30), control); });
  // Both engines send their first window of packets, and say so within a publishing period.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((*g)->progress().counters.requesters.packets_sent < 2 &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE((*g)->progress().counters.requesters.packets_sent, 2u);
  const auto stopped_at = std::chrono::steady_clock::now();
  stop.store(true);
  runner.join();
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, std::chrono::seconds(1));
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.message().find("stopped"), std::string::npos) << result.to_string();
  const std::vector<OpRecord> records = (*g)->take_records();
  ASSERT_EQ(records.size(), 2u);
  for (const OpRecord& r : records) EXPECT_TRUE(r.failed) << "rank " << r.rank;
}

// Two hosts of two ranks, one per NIC, through collectives whose transfers cross rails (ring
// 1 -> 2 and 3 -> 0, all-to-all 0 -> 3 and 1 -> 2, ...), each host as one engine per NIC.
struct RailRun {
  using Mac = MemorySwitch::Mac;
  Outcome outcome;
  std::map<std::pair<Mac, Mac>, uint64_t> links;
};

RailRun run_collectives_on_rails(bool pxn) {
  constexpr uint32_t kRanks = 2;
  JobSetup s(kRanks);
  s.expand.pxn = pxn;
  MemorySwitch sw;
  std::vector<std::unique_ptr<HostEngines>> hosts;
  for (uint32_t h = 0; h < kHosts; ++h) {
    std::map<uint32_t, std::vector<v1::Op>> programs;
    for (uint32_t r = h * kRanks; r < (h + 1) * kRanks; ++r) {
      programs[r].push_back(op(v1::OP_KIND_ALL_REDUCE, 1 << 20, r, 0));
      programs[r].push_back(op(v1::OP_KIND_ALL_GATHER, 200 << 10, r, 1));
      programs[r].push_back(op(v1::OP_KIND_ALL_TO_ALL, 100 << 10, r, 2));
      programs[r].push_back(op(v1::OP_KIND_SCATTER, 50 << 10, r, 3, 1));
    }
    std::vector<backend::PacketPort*> ports;
    for (uint32_t n = 0; n < kNicsPerHost; ++n) ports.push_back(&sw.add(mac_of(h, n)));
    auto g = HostEngines::create(s.config, world_header(kRanks), s.placement, s.expand,
                                 std::move(programs),
                                 std::vector<RankAddressing>(kNicsPerHost, s.addressing(true)), ports,
                                 steady_clock());
    EXPECT_TRUE(g.ok()) << g.status().to_string();
    if (!g.ok()) return {};
    hosts.push_back(std::move(g).value());
  }
  RailRun out;
  out.outcome.status.resize(hosts.size());
  std::vector<std::thread> threads;
  for (size_t h = 0; h < hosts.size(); ++h) {
    threads.emplace_back(
        [&, h] { out.outcome.status[h] = hosts[h]->run(std::chrono::seconds(20)); });
  }
  for (auto& t : threads) t.join();
  for (auto& g : hosts) {
    for (OpRecord& r : g->take_records()) out.outcome.records.push_back(r);
    out.outcome.counters += g->counters();
  }
  out.links = sw.links();
  return out;
}

// Frames whose NIC index differs at the two ends (the 6th byte of mac_of is the NIC).
uint64_t cross_rail_frames(const RailRun& run) {
  uint64_t n = 0;
  for (const auto& [ends, frames] : run.links) {
    if (ends.first[5] != ends.second[5]) n += frames;
  }
  return n;
}

TEST(HostEnginesTest, PxnKeepsEveryNicOnItsRailAndDeliversEveryByte) {
  const RailRun direct = run_collectives_on_rails(false);
  const RailRun relayed = run_collectives_on_rails(true);
  for (const RailRun* run : {&direct, &relayed}) {
    for (const Status& st : run->outcome.status) ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(run->outcome.records.size(), 4u * 4);
    for (const OpRecord& r : run->outcome.records) EXPECT_FALSE(r.failed) << r.failure;
    EXPECT_EQ(run->outcome.counters.pattern_errors, 0u);
    EXPECT_EQ(run->outcome.counters.icrc_errors, 0u);
    EXPECT_EQ(run->outcome.counters.rx_foreign, 0u);
    for (const auto& [ends, frames] : run->links) {
      EXPECT_NE(ends.first[4], ends.second[4]) << "a frame to its own host";
    }
  }
  // Without PXN the job sends across rails; with it, each NIC talks only to its own rail, and
  // the same payload crosses between the hosts.
  EXPECT_GT(cross_rail_frames(direct), 0u);
  EXPECT_EQ(cross_rail_frames(relayed), 0u);
  EXPECT_EQ(relayed.outcome.counters.responders.bytes_received,
            direct.outcome.counters.responders.bytes_received);
  uint64_t relayed_network = 0, direct_network = 0;
  for (const OpRecord& r : relayed.outcome.records) relayed_network += r.network_bytes;
  for (const OpRecord& r : direct.outcome.records) direct_network += r.network_bytes;
  EXPECT_EQ(relayed_network, direct_network);
  EXPECT_GT(relayed.outcome.counters.responders.bytes_received, 1u << 20);
}

}  // namespace
}  // namespace collide::replayer::engine

namespace collide::replayer::engine {
namespace {

// Two queues per NIC, an engine each: every op's channels split over the two lanes, the NIC's
// flow rules (here the memory switch) steer each QP by its source port to its lane's queue.
// Records, once merged over the lanes, are those of one engine per host; both queues carried
// frames; no frame reached a lane that does not run its QP. A NIC carries every second channel
// (channel c enters a host on rail c % 2): 4 channels give each lane of a NIC one, 6 unequal.
class HostEnginesLanesTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(HostEnginesLanesTest, TwoQueuesPerNicSplitTheChannelsAndRecordTheOpsOnce) {
  const uint32_t channels = GetParam();
  Lanes lanes;
  lanes.queues = 2;
  lanes.steer = true;
  lanes.channels = channels;
  std::vector<uint64_t> per_queue;
  const Outcome split = run_engines_per_nic(4, programs_of_host(0, 4), true,
                                            std::chrono::seconds(20), {}, lanes, &per_queue);
  Lanes one_lane;
  one_lane.channels = channels;
  const Outcome whole = run_engines_per_nic(4, programs_of_host(0, 4), true,
                                            std::chrono::seconds(20), {}, one_lane);
  for (const Status& st : split.status) ASSERT_TRUE(st.ok()) << st.to_string();
  for (const Status& st : whole.status) ASSERT_TRUE(st.ok()) << st.to_string();
  for (const OpRecord& r : split.records) EXPECT_FALSE(r.failed) << r.failure;
  EXPECT_EQ(keys(split.records), keys(whole.records));
  EXPECT_EQ(split.counters.responders.bytes_received, whole.counters.responders.bytes_received);
  EXPECT_EQ(split.counters.rx_wrong_lane, 0u);
  EXPECT_EQ(split.counters.rx_foreign, 0u);
  EXPECT_EQ(split.counters.pattern_errors, 0u);
  ASSERT_EQ(per_queue.size(), kHosts * kNicsPerHost * 2);
  for (size_t q = 0; q < per_queue.size(); ++q) EXPECT_GT(per_queue[q], 0u) << "queue " << q << ": " << ::testing::PrintToString(per_queue);
}

INSTANTIATE_TEST_SUITE_P(Channels, HostEnginesLanesTest, ::testing::Values(4u, 6u));

// Without source ports that name their lane, the NIC's steering puts QPs on queues at random:
// frames for another lane are counted (and lost to it) rather than taken for foreign ones.
TEST(HostEnginesLanesTest, FramesOnAnotherLanesQueueAreCounted) {
  Lanes lanes;
  lanes.queues = 2;
  lanes.steer = false;
  const Outcome out = run_engines_per_nic(4, programs_of_host(0, 4), true,
                                          std::chrono::seconds(5), {}, lanes);
  EXPECT_GT(out.counters.rx_wrong_lane, 0u);
  EXPECT_EQ(out.counters.rx_foreign, 0u);
  // Their QPs never hear back: the run fails as NCCL's would, it does not hang.
  EXPECT_FALSE(out.status[0].ok() && out.status[1].ok());
}

}  // namespace
}  // namespace collide::replayer::engine

namespace collide::replayer::engine {
namespace {

// A slow receiver aimed at one NIC of a host (a fault on "h0.nic1") holds that NIC's receive
// ring alone; the host's other NIC keeps draining. Aimed at no NIC, it holds every one.
TEST(HostEnginesTest, ADrainPauseAimedAtOneNicHoldsOnlyThatNic) {
  using namespace std::chrono_literals;
  // Long enough that an engine thread of a busy machine (tests run two at a time on 2 cores) polls
  // within it: one 30 ms window passed unseen by an engine not yet scheduled.
  const std::vector<DrainPause> on_nic1 = {{0ns, 200ms, 1u}};
  const Outcome aimed = run_engines_per_nic(2, programs_of_host(0, 2), true, std::chrono::seconds(20),
                                            {}, {}, nullptr, on_nic1);
  for (const Status& st : aimed.status) ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(aimed.host0_nics.at(0).rx_paused_polls, 0u);
  EXPECT_GT(aimed.host0_nics.at(1).rx_paused_polls, 0u);

  const std::vector<DrainPause> whole_host = {{0ns, 200ms, std::nullopt}};
  const Outcome both = run_engines_per_nic(2, programs_of_host(0, 2), true, std::chrono::seconds(20),
                                           {}, {}, nullptr, whole_host);
  for (const Status& st : both.status) ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_GT(both.host0_nics.at(0).rx_paused_polls, 0u);
  EXPECT_GT(both.host0_nics.at(1).rx_paused_polls, 0u);
}

}  // namespace
}  // namespace collide::replayer::engine
