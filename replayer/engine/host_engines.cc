#include "replayer/engine/host_engines.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include <boost/lockfree/spsc_queue.hpp>
#include <fmt/format.h>

namespace collide::replayer::engine {

// Arrivals waiting in one ring: far more than the local steps a host's ranks have in flight at
// once (a few per rank, channel and QP); a full ring only delays a handover to the next poll.
constexpr size_t kRingCapacity = 1 << 14;

using Ring = boost::lockfree::spsc_queue<LocalArrival>;

// The rings between a host's engines, one per ordered pair, and each engine's end of them.
class CrossEngineRings {
 public:
  CrossEngineRings(size_t engines, std::vector<int> engine_of_rank)
      : engines_(engines), engine_of_rank_(std::move(engine_of_rank)) {
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
      const int to = a.receiver < rings_.engine_of_rank_.size()
                         ? rings_.engine_of_rank_[a.receiver]
                         : -1;
      // A rank no engine of this host runs: the expander only makes local steps within a host.
      if (to < 0) return true;
      return rings_.ring(self_, static_cast<size_t>(to)).push(a);
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
  std::vector<int> engine_of_rank_;
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
  std::vector<int> engine_of_rank(placement.world_size(), -1);
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
  std::unique_ptr<HostEngines> group(new HostEngines());
  for (const auto& [nic, ranks] : by_nic) {
    for (const auto& [rank, ops] : ranks) {
      engine_of_rank[rank] = static_cast<int>(group->nics_.size());
    }
    group->nics_.push_back(nic);
  }
  group->rings_ = std::make_unique<CrossEngineRings>(group->nics_.size(), engine_of_rank);
  if (group->nics_.size() > 1) {
    config.max_idle_wait = std::min(config.max_idle_wait, kIdleWaitBetweenEngines);
  }
  for (size_t i = 0; i < group->nics_.size(); ++i) {
    const uint32_t nic = group->nics_[i];
    auto engine = Engine::create(config, header, placement, expand, std::move(by_nic[nic]),
                                 addressing[nic], *ports[nic], clock, &group->rings_->end(i));
    if (!engine.ok()) {
      return engine.status().with_context(fmt::format("engine of NIC {}", nic));
    }
    group->engines_.push_back(std::move(engine).value());
    group->ports_.push_back(ports[nic]);
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
  for (const HostProgress& p : published_) {
    total.ops_recorded += p.ops_recorded;
    total.counters += p.counters;
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
  std::vector<OpRecord> out;
  for (auto& e : engines_) {
    for (OpRecord& r : e->take_records()) out.push_back(std::move(r));
  }
  return out;
}

EngineCounters& operator+=(EngineCounters& total, const EngineCounters& more) {
  total.rx_frames += more.rx_frames;
  total.rx_foreign += more.rx_foreign;
  total.icrc_errors += more.icrc_errors;
  total.pattern_errors += more.pattern_errors;
  total.tx_frames += more.tx_frames;
  total.tx_bytes += more.tx_bytes;
  total.rx_paused_polls += more.rx_paused_polls;
  total.tx_delayed_frames += more.tx_delayed_frames;
  total.pause_frames += more.pause_frames;
  total.paused_ns += more.paused_ns;
  total.requesters += more.requesters;
  total.responders += more.responders;
  return total;
}

EngineCounters HostEngines::counters() const {
  EngineCounters total;
  for (const auto& e : engines_) total += e->counters();
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
