#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/backend/packet_port.h"
#include "replayer/engine/engine.h"

namespace collide::replayer::engine {

class CrossEngineRings;

// One host's ranks over its NICs: one engine per NIC that runs ranks (Placement::nic_of_rank),
// each over that NIC's packet port and on its own thread, as a real host drives one NIC per core.
// A step between ranks on different engines goes through a lock-free single-producer,
// single-consumer ring (one per ordered pair of engines) carrying its modeled NVLink arrival
// time. When one engine fails, the others stop and record their running ops as failed.
class HostEngines {
 public:
  // `ports[n]` is NIC n's port; a NIC whose ranks are absent from `programs` gets no engine.
  // `clock` is called from every engine's thread. Each engine idles at most
  // min(config.max_idle_wait, kIdleWaitBetweenEngines) so a handed-over step is not held up.
  static Result<std::unique_ptr<HostEngines>> create(
      EngineConfig config, const v1::TraceHeader& header, const collectives::Placement& placement,
      const collectives::ExpandOptions& expand, std::map<uint32_t, std::vector<v1::Op>> programs,
      const RankAddressing& addressing, const std::vector<backend::PacketPort*>& ports,
      const Engine::Clock& clock);
  ~HostEngines();

  static constexpr std::chrono::microseconds kIdleWaitBetweenEngines{20};

  // Runs every engine on its own thread until all are done, one fails, or `timeout` passes.
  // `cores[i]` pins the i-th engine (NIC order) to that core; empty: no pinning.
  Status run(std::chrono::nanoseconds timeout, const std::vector<int>& cores = {});

  size_t engine_count() const { return engines_.size(); }
  uint32_t nic_of_engine(size_t i) const { return nics_[i]; }
  Engine& engine(size_t i) { return *engines_[i]; }

  // Merged over the engines.
  std::vector<OpRecord> take_records();
  EngineCounters counters() const;
  std::vector<QpCounters> qp_counters() const;

 private:
  HostEngines() = default;
  std::unique_ptr<CrossEngineRings> rings_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::vector<uint32_t> nics_;
};

// Sums engines' counters.
EngineCounters& operator+=(EngineCounters& total, const EngineCounters& more);

}  // namespace collide::replayer::engine
