#include "replayer/engine/host_engines.h"

#include <algorithm>
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

    void deliver(std::vector<uint8_t> frame) {
      {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(frame));
      }
      arrived_.notify_one();
    }

   private:
    static constexpr uint32_t kCapacity = 9216;
    static void free(backend::Frame& f) { testing_frames::free(f); }
    MemorySwitch& switch_;
    wire::MacAddress mac_;
    std::mutex mutex_;
    std::condition_variable arrived_;
    std::deque<std::vector<uint8_t>> queue_;
  };

  // Ports are added before any engine runs.
  Port& add(wire::MacAddress mac) {
    ports_.push_back(std::make_unique<Port>(*this, mac));
    return *ports_.back();
  }
  void forward(const wire::MacAddress& to, std::vector<uint8_t> frame) {
    for (auto& p : ports_) {
      if (p->mac() == to) return p->deliver(std::move(frame));
    }
  }

 private:
  std::vector<std::unique_ptr<Port>> ports_;
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

Outcome run_engines_per_nic(uint32_t ranks_per_host,
                            const std::map<uint32_t, std::vector<v1::Op>>& host0_programs,
                            bool host1_runs, std::chrono::seconds timeout,
                            const std::vector<int>& cores = {}) {
  JobSetup s(ranks_per_host);
  MemorySwitch sw;
  std::vector<std::unique_ptr<HostEngines>> hosts;
  for (uint32_t h = 0; h < (host1_runs ? kHosts : 1); ++h) {
    std::vector<backend::PacketPort*> ports;
    for (uint32_t n = 0; n < kNicsPerHost; ++n) ports.push_back(&sw.add(mac_of(h, n)));
    auto g = HostEngines::create(s.config, world_header(ranks_per_host), s.placement, s.expand,
                                 h == 0 ? host0_programs : programs_of_host(h, ranks_per_host),
                                 std::vector<RankAddressing>(kNicsPerHost, s.addressing(true)), ports,
                                 steady_clock());
    EXPECT_TRUE(g.ok()) << g.status().to_string();
    EXPECT_EQ((*g)->engine_count(), kNicsPerHost);
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

}  // namespace
}  // namespace collide::replayer::engine
