#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "common/result.h"
#include "injectors/pfc_storm.h"
#include "orchestrator/faults/fault_plan.h"

// A scenario's PFC storm while it runs: injectors::run_pfc_storm on a thread of its own, inside
// the namespace of the device it sends from (entering a namespace moves only the calling thread),
// so that the faults' scheduler goes on with the run's other faults meanwhile.
namespace collide::orchestrator::faults {

class RunningStorm {
 public:
  // Starts sending now; the storm ends by itself after its duration.
  static std::unique_ptr<RunningStorm> start(StormPlan plan);
  ~RunningStorm();
  RunningStorm(const RunningStorm&) = delete;
  RunningStorm& operator=(const RunningStorm&) = delete;

  // Ends the storm if it still sends and waits for its thread: what it sent, or why it could not
  // send (no such device, no namespace). Once only; later calls give the same answer.
  Result<injectors::PfcStormResult> stop();

 private:
  RunningStorm() = default;

  std::atomic<bool> stop_{false};
  std::thread thread_;
  Result<injectors::PfcStormResult> result_ = injectors::PfcStormResult{};
};

}  // namespace collide::orchestrator::faults
