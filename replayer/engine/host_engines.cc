#include "replayer/engine/host_engines.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include <boost/lockfree/spsc_queue.hpp>
#include <fmt/format.h>

#include "replayer/collectives/channel_lanes.h"

namespace collide::replayer::engine {

// Arrivals waiting in one ring: far more than the local steps a host's ranks have in flight at
// once (a few per rank, channel and QP); a full ring only delays a handover to the next poll.
constexpr size_t kRingCapacity = 1 << 14;

using Ring = boost::lockfree::spsc_queue<LocalArrival>;

// The rings between a host's engines, one per ordered pair, and each engine's end of them.
class CrossEngineRings {
 public:
  // `first_engine_of_rank[r]`: the engine of lane 0 of rank r's NIC (-1: not on this host);
  // `lanes_of_rank[r]`: how many lanes that NIC has, whose engines follow it.
  CrossEngineRings(size_t engines, std::vector<int> first_engine_of_rank,
                   std::vector<uint32_t> lanes_of_rank, uint32_t nics_per_host)
      : engines_(engines),
        nics_per_host_(nics_per_host),
        first_engine_of_rank_(std::move(first_engine_of_rank)),
        lanes_of_rank_(std::move(lanes_of_rank)) {
    for (size_t i = 0; i < engines * engines; ++i) {
      rings_.push_back(std::make_unique<Ring>(kRingCapacity));
    }
    for (size_t i = 0; i < engines; ++i) ends_.emplace_back(*this, i);
  }
  LocalExchange& end(size_t engine) { return ends_[engine]; }

 private:
  class End : public LocalExchange {
   public:
    End(CrossEngineRings& rings, size_t self) : rings_(rings), self_(self) {}
    bool hand_over(const LocalArrival& a) override {
      const int first = a.receiver < rings_.first_engine_of_rank_.size()
                            ? rings_.first_engine_of_rank_[a.receiver]
                            : -1;
      // A rank no engine of this host runs: the expander only makes local steps within a host.
      if (first < 0) return true;
      // The receiver's lane that runs the transfer's channel.
      const uint32_t lane = collectives::lane_of_channel(
          Engine::channel_of_qpn(a.qpn), rings_.nics_per_host_, rings_.lanes_of_rank_[a.receiver]);
      return rings_.ring(self_, static_cast<size_t>(first) + lane).push(a);
    }
    void take(std::vector<LocalArrival>& out) override {
      for (size_t from = 0; from < rings_.engines_; ++from) {
        if (from == self_) continue;
        rings_.ring(from, self_).consume_all([&](const LocalArrival& a) { out.push_back(a); });
      }
    }
    bool has_arrivals() const override {
      for (size_t from = 0; from < rings_.engines_; ++from) {
        if (from != self_ && rings_.ring(from, self_).read_available() > 0) return true;
      }
      return false;
    }

   private:
    CrossEngineRings& rings_;
    size_t self_;
  };

  Ring& ring(size_t from, size_t to) const { return *rings_[from * engines_ + to]; }

  size_t engines_;
  uint32_t nics_per_host_;
  std::vector<int> first_engine_of_rank_;
  std::vector<uint32_t> lanes_of_rank_;
  std::vector<std::unique_ptr<Ring>> rings_;
  std::vector<End> ends_;
};

HostEngines::~HostEngines() = default;

Result<std::unique_ptr<HostEngines>> HostEngines::create(
    EngineConfig config, const v1::TraceHeader& header, const collectives::Placement& placement,
    const collectives::ExpandOptions& expand, std::map<uint32_t, std::vector<v1::Op>> programs,
    const std::vector<RankAddressing>& addressing,
    const std::vector<backend::PacketPort*>& ports, const Engine::Clock& clock) {
  if (addressing.size() != ports.size()) {
    return invalid_argument(fmt::format("{} addressings for {} ports", addressing.size(), ports.size()));
  }
  std::map<uint32_t, std::map<uint32_t, std::vector<v1::Op>>> by_nic;
  std::vector<int> first_engine_of_rank(placement.world_size(), -1);
  for (auto& [rank, ops] : programs) {
    if (rank >= placement.world_size() || rank >= placement.nic_of_rank.size()) {
      return invalid_argument(
          fmt::format("rank {} is outside the {}-rank job", rank, placement.world_size()));
    }
    const uint32_t nic = placement.nic_of_rank[rank];
    if (nic >= ports.size() || ports[nic] == nullptr) {
      return invalid_argument(fmt::format("rank {} uses NIC {}, but the host has {} ports", rank,
                                          nic, ports.size()));
    }
    by_nic[nic][rank] = std::move(ops);
  }
  // Each NIC gets an engine per queue of its port (a lane each, running the channels of its lane
  // for every rank of the NIC), lanes of one NIC side by side.
  std::unique_ptr<HostEngines> group(new HostEngines());
  std::vector<uint32_t> lanes_of_rank(placement.world_size(), 1);
  for (const auto& [nic, ranks] : by_nic) {
    const auto lanes = static_cast<uint32_t>(std::max<size_t>(1, ports[nic]->queue_count()));
    for (const auto& [rank, ops] : ranks) {
      first_engine_of_rank[rank] = static_cast<int>(group->nics_.size());
      lanes_of_rank[rank] = lanes;
      if (lanes > 1) group->gates_[rank] = std::make_unique<LaneGate>(lanes);
    }
    for (uint32_t lane = 0; lane < lanes; ++lane) {
      group->nics_.push_back(nic);
      group->lanes_.push_back(lane);
    }
  }
  const uint32_t nics_per_host = placement.nics_per_host();
  group->rings_ = std::make_unique<CrossEngineRings>(group->nics_.size(), first_engine_of_rank,
                                                     lanes_of_rank, nics_per_host);
  if (group->nics_.size() > 1) {
    config.max_idle_wait = std::min(config.max_idle_wait, kIdleWaitBetweenEngines);
  }
  for (size_t i = 0; i < group->nics_.size(); ++i) {
    const uint32_t nic = group->nics_[i];
    backend::PacketPort& port = *ports[nic];
    EngineLane lane;
    lane.index = group->lanes_[i];
    lane.count = static_cast<uint32_t>(std::max<size_t>(1, port.queue_count()));
    lane.nics_per_host = nics_per_host;
    EngineConfig lane_config = config;
    lane_config.nic = nic;
    lane_config.pace_gbps = config.pace_gbps / lane.count;  // the NIC's line rate, shared
    std::map<uint32_t, std::vector<v1::Op>> programs_of_lane;
    for (const auto& [rank, ops] : by_nic[nic]) {
      if (lane.count > 1) lane.gates[rank] = group->gates_.at(rank).get();
      // Every lane runs every op of the NIC's ranks (its channels of it); the last takes them.
      programs_of_lane[rank] = lane.index + 1 == lane.count ? std::move(by_nic[nic][rank]) : ops;
    }
    backend::PacketPort& lane_port = lane.count > 1 ? port.queue(lane.index) : port;
    auto engine = Engine::create(lane_config, header, placement, expand, std::move(programs_of_lane),
                                 addressing[nic], lane_port, clock, &group->rings_->end(i), lane);
    if (!engine.ok()) {
      return engine.status().with_context(lane.count > 1 ? fmt::format("engine of NIC {} queue {}", nic, lane.index)
                                                         : fmt::format("engine of NIC {}", nic));
    }
    group->engines_.push_back(std::move(engine).value());
    group->ports_.push_back(&lane_port);
  }
  group->published_.resize(group->engines_.size());
  return group;
}

namespace {

Status pin_to_core(int core) {
  if (core < 0 || core >= CPU_SETSIZE) {
    return invalid_argument(fmt::format("core {} is not a CPU number", core));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  const int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (err != 0) return errno_status(err, fmt::format("pinning an engine to core {}", core));
  return {};
}

}  // namespace

Status HostEngines::run(std::chrono::nanoseconds timeout, const HostRunControl& control) {
  if (!control.cores.empty() && control.cores.size() != engines_.size()) {
    return invalid_argument(fmt::format("{} cores for {} engines", control.cores.size(), engines_.size()));
  }
  std::atomic<bool> stop{false};
  std::atomic<size_t> done{0};  // engines whose ranks all finished
  std::atomic<int> cause{-1};   // the engine that ended first without finishing
  std::vector<Status> results(engines_.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < engines_.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = run_engine(i, timeout, control, stop, done);
      if (control.on_engine_thread_end) control.on_engine_thread_end();
      if (results[i].ok()) return;
      // Whatever ended this engine early ends the others: a host's ranks fail together. The
      // others then end because they were stopped; the first one to end names the failure.
      int none = -1;
      cause.compare_exchange_strong(none, static_cast<int>(i));
      stop.store(true, std::memory_order_relaxed);
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < engines_.size(); ++i) publish(i);
  if (cause.load() < 0) return {};
  const auto first = static_cast<size_t>(cause.load());
  const std::string why =
      fmt::format("engine of NIC {}: {}", nics_[first], results[first].message());
  for (auto& e : engines_) {
    if (!e->failed() && !e->finished()) e->abort(why);
  }
  return Status(results[first].code(), why);
}

Status HostEngines::run_engine(size_t i, std::chrono::nanoseconds timeout,
                               const HostRunControl& control, std::atomic<bool>& stop,
                               std::atomic<size_t>& done) {
  using Clock = std::chrono::steady_clock;
  if (!control.cores.empty() && control.cores[i] >= 0) {
    COLLIDE_RETURN_IF_ERROR(pin_to_core(control.cores[i]));
  }
  if (control.on_engine_thread) COLLIDE_RETURN_IF_ERROR(control.on_engine_thread());
  const auto deadline = Clock::now() + timeout;
  Status s;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now());
    s = engines_[i]->run(std::min<std::chrono::nanoseconds>(kPublishEvery, left), &stop);
    publish(i);
    if (s.code() != StatusCode::kDeadlineExceeded || Clock::now() >= deadline) break;
    if (control.stop != nullptr && control.stop->load(std::memory_order_relaxed)) {
      stop.store(true, std::memory_order_relaxed);
    }
  }
  if (!s.ok()) return s;
  done.fetch_add(1);
  linger(i, control, stop, done);
  return {};
}

void HostEngines::linger(size_t i, const HostRunControl& control, const std::atomic<bool>& stop,
                         const std::atomic<size_t>& done) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kWait = std::chrono::microseconds(500);
  Engine& engine = *engines_[i];
  const auto stopped = [&] {
    return stop.load(std::memory_order_relaxed) ||
           (control.stop != nullptr && control.stop->load(std::memory_order_relaxed));
  };
  // While the host's other engines run: their peers and ours share the fabric's fate.
  while (done.load() < engines_.size() && !stopped()) {
    if (!engine.poll()) ports_[i]->wait_for_frames(kWait);
  }
  if (control.linger_quiet.count() <= 0) return;
  const auto give_up = Clock::now() + 10 * control.linger_quiet;
  auto last_frame = Clock::now();
  uint64_t seen = engine.counters().rx_frames;
  while (Clock::now() - last_frame < control.linger_quiet && Clock::now() < give_up && !stopped()) {
    engine.poll();
    if (const uint64_t now_seen = engine.counters().rx_frames; now_seen != seen) {
      seen = now_seen;
      last_frame = Clock::now();
    } else {
      ports_[i]->wait_for_frames(kWait);
    }
  }
}

void HostEngines::publish(size_t i) {
  HostProgress p{engines_[i]->ops_recorded(), engines_[i]->counters()};
  std::lock_guard lock(published_mutex_);
  published_[i] = p;
}

HostProgress HostEngines::progress() const {
  HostProgress total;
  std::lock_guard lock(published_mutex_);
  for (size_t i = 0; i < published_.size(); ++i) {
    // Every lane of a NIC records every op of its ranks: count them once.
    if (lanes_[i] == 0) total.ops_recorded += published_[i].ops_recorded;
    total.counters += published_[i].counters;
  }
  return total;
}

std::vector<HookWindow> HostEngines::hook_windows() const {
  std::map<std::pair<int, uint32_t>, HookWindow> merged;
  for (const auto& e : engines_) {
    for (const HookWindow& w : e->hook_windows()) {
      auto [it, fresh] = merged.try_emplace({static_cast<int>(w.kind), w.index}, w);
      if (fresh) continue;
      HookWindow& m = it->second;
      m.start_ns = std::min(m.start_ns, w.start_ns);
      // 0: still in force when the run ended, which outlasts any end.
      m.end_ns = (m.end_ns == 0 || w.end_ns == 0) ? 0 : std::max(m.end_ns, w.end_ns);
    }
  }
  std::vector<HookWindow> out;
  for (auto& [key, w] : merged) out.push_back(w);
  return out;
}

std::vector<OpRecord> HostEngines::take_records() {
  // Each lane of a NIC recorded its share of every op: an op ran from its first lane's start to
  // its last lane's end and sent what they sent together. Lanes of one NIC follow each other.
  std::vector<OpRecord> out;
  size_t i = 0;
  while (i < engines_.size()) {
    const size_t first = i;
    while (i < engines_.size() && nics_[i] == nics_[first]) ++i;
    const size_t lanes = i - first;
    if (lanes == 1) {
      for (OpRecord& r : engines_[first]->take_records()) out.push_back(std::move(r));
      continue;
    }
    std::map<std::pair<uint32_t, uint64_t>, std::pair<OpRecord, size_t>> merged;
    for (size_t e = first; e < i; ++e) {
      for (OpRecord& r : engines_[e]->take_records()) {
        auto [it, fresh] = merged.try_emplace({r.rank, r.op_index}, r, 1);
        if (fresh) continue;
        OpRecord& m = it->second.first;
        ++it->second.second;
        m.start_ns = std::min(m.start_ns, r.start_ns);
        m.end_ns = std::max(m.end_ns, r.end_ns);
        m.network_bytes += r.network_bytes;
        if (r.failed && !m.failed) {
          m.failed = true;
          m.failure = r.failure;
        }
      }
    }
    for (auto& [key, entry] : merged) {
      OpRecord& m = entry.first;
      // A run that ended early may leave an op some lanes never started: it did not complete.
      if (entry.second < lanes && !m.failed) {
        m.failed = true;
        m.failure = fmt::format("{} of the NIC's {} queues never ran it", lanes - entry.second, lanes);
      }
      out.push_back(std::move(m));
    }
  }
  return out;
}

EngineCounters& operator+=(EngineCounters& total, const EngineCounters& more) {
  total.rx_frames += more.rx_frames;
  total.rx_foreign += more.rx_foreign;
  total.rx_wrong_lane += more.rx_wrong_lane;
  total.icrc_errors += more.icrc_errors;
  total.pattern_errors += more.pattern_errors;
  total.tx_frames += more.tx_frames;
  total.tx_bytes += more.tx_bytes;
  total.rx_paused_polls += more.rx_paused_polls;
  total.tx_delayed_frames += more.tx_delayed_frames;
  total.pause_frames += more.pause_frames;
  total.paused_ns += more.paused_ns;
  total.pause_frames_sent += more.pause_frames_sent;
  total.rx_held_frames += more.rx_held_frames;
  total.rx_buffer_dropped += more.rx_buffer_dropped;
  total.requesters += more.requesters;
  total.responders += more.responders;
  return total;
}

EngineCounters HostEngines::counters() const {
  EngineCounters total;
  for (const auto& e : engines_) total += e->counters();
  return total;
}

std::vector<uint32_t> HostEngines::nics() const {
  std::vector<uint32_t> out;
  for (uint32_t nic : nics_) {
    if (out.empty() || out.back() != nic) out.push_back(nic);
  }
  return out;
}

std::vector<EngineCounters> HostEngines::counters_of_lanes(uint32_t nic) const {
  std::vector<EngineCounters> out;
  for (size_t i = 0; i < engines_.size(); ++i) {
    if (nics_[i] == nic) out.push_back(engines_[i]->counters());
  }
  return out;
}

EngineCounters HostEngines::counters_of_nic(uint32_t nic) const {
  EngineCounters total;
  for (const EngineCounters& lane : counters_of_lanes(nic)) total += lane;
  return total;
}

std::vector<QpCounters> HostEngines::qp_counters() const {
  std::vector<QpCounters> out;
  for (const auto& e : engines_) {
    for (const QpCounters& q : e->qp_counters()) out.push_back(q);
  }
  return out;
}

}  // namespace collide::replayer::engine
