#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/backend/packet_port.h"
#include "replayer/engine/engine.h"

namespace collide::replayer::engine {

class CrossEngineRings;

// How a host's engines run: where, until what, and how long they stay after their work.
struct HostRunControl {
  // cores[i] pins the i-th engine (NIC order) to that core, -1 leaves it free; empty: none pinned.
  std::vector<int> cores;
  // Set from another thread: every engine stops (HostEngines::run then says it was stopped).
  const std::atomic<bool>* stop = nullptr;
  // A peer may still wait for the ACK of our last packets: if it was lost, its retransmission
  // must find us answering (a NIC does not go away when its process's work is done). An engine
  // whose ranks are done keeps polling while the host's other engines run, then until no frame
  // has come for `linger_quiet` (at most ten times that: beyond a peer's whole retry budget).
  std::chrono::nanoseconds linger_quiet{0};
  // Called first and last on each engine's thread (e.g. to make it a thread the packet library
  // knows, and to let go of that); an error from the first ends that engine, and with it the run.
  std::function<Status()> on_engine_thread;
  std::function<void()> on_engine_thread_end;
};

// What the engines have done so far, as they last published it (every kPublishEvery).
struct HostProgress {
  size_t ops_recorded = 0;
  EngineCounters counters;
};

// One host's ranks over its NICs: one engine per NIC that runs ranks (Placement::nic_of_rank),
// each over that NIC's packet port and on its own thread, as a real host drives one NIC per core.
// A port of several queues (PacketPort::queue_count) gets an engine per queue, so a NIC one core
// cannot fill uses several: each runs its lane of the NIC's work (the channels c % queues == lane
// of every op of its ranks) over its queue, and a rank's next op waits for all of its lanes
// (lane_gate.h). Each QP's frames must then reach its lane's queue: see EngineConfig::steer_lanes.
// A step between ranks on different engines goes through a lock-free single-producer,
// single-consumer ring (one per ordered pair of engines) carrying its modeled NVLink arrival
// time. When one engine fails, the others stop and record their running ops as failed.
class HostEngines {
 public:
  // `ports[n]` is NIC n's port and `addressing[n]` how its frames reach peers (the next hop
  // differs per NIC: each is cabled to its own switch port); a NIC whose ranks are absent from
  // `programs` gets no engine. `clock` is called from every engine's thread. With several engines, each idles
  // at most min(config.max_idle_wait, kIdleWaitBetweenEngines) so a handed-over step is not held up.
  static Result<std::unique_ptr<HostEngines>> create(
      EngineConfig config, const v1::TraceHeader& header, const collectives::Placement& placement,
      const collectives::ExpandOptions& expand, std::map<uint32_t, std::vector<v1::Op>> programs,
      const std::vector<RankAddressing>& addressing,
      const std::vector<backend::PacketPort*>& ports, const Engine::Clock& clock);
  ~HostEngines();

  static constexpr std::chrono::microseconds kIdleWaitBetweenEngines{20};
  static constexpr std::chrono::milliseconds kPublishEvery{50};

  // Runs every engine on its own thread until all are done, one fails, `timeout` passes or
  // control.stop is set; then lingers (see HostRunControl). Call once.
  Status run(std::chrono::nanoseconds timeout, const HostRunControl& control = {});

  // Safe to call from any thread while run() runs.
  HostProgress progress() const;

  size_t engine_count() const { return engines_.size(); }
  uint32_t nic_of_engine(size_t i) const { return nics_[i]; }
  uint32_t lane_of_engine(size_t i) const { return lanes_[i]; }
  // The NICs that run ranks, in order, and what each NIC's engines counted together.
  std::vector<uint32_t> nics() const;
  EngineCounters counters_of_nic(uint32_t nic) const;
  std::vector<EngineCounters> counters_of_lanes(uint32_t nic) const;  // by queue
  Engine& engine(size_t i) { return *engines_[i]; }

  // Merged over the engines (an op's record over its lanes).
  std::vector<OpRecord> take_records();
  EngineCounters counters() const;
  std::vector<QpCounters> qp_counters() const;
  // Each drain pause and send delay once: from the first engine's start to the last one's end.
  std::vector<HookWindow> hook_windows() const;

 private:
  HostEngines() = default;
  // One engine's thread: runs it in slices (publishing its progress after each), then lingers.
  Status run_engine(size_t i, std::chrono::nanoseconds timeout, const HostRunControl& control,
                    std::atomic<bool>& stop, std::atomic<size_t>& done);
  void linger(size_t i, const HostRunControl& control, const std::atomic<bool>& stop,
              const std::atomic<size_t>& done);
  void publish(size_t i);

  std::unique_ptr<CrossEngineRings> rings_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::vector<backend::PacketPort*> ports_;  // engine i's port
  std::vector<uint32_t> nics_;   // engine i's NIC
  std::vector<uint32_t> lanes_;  // engine i's lane (its queue of the NIC's port)
  std::map<uint32_t, std::unique_ptr<LaneGate>> gates_;  // by rank, on NICs of several lanes
  mutable std::mutex published_mutex_;
  std::vector<HostProgress> published_;  // per engine
};

// Sums engines' counters.
EngineCounters& operator+=(EngineCounters& total, const EngineCounters& more);

}  // namespace collide::replayer::engine
