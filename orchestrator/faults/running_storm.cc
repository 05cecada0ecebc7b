#include "orchestrator/faults/running_storm.h"

#include <pthread.h>
#include <sched.h>

#include "common/logging.h"
#include "common/netns.h"

namespace collide::orchestrator::faults {

std::unique_ptr<RunningStorm> RunningStorm::start(StormPlan plan) {
  std::unique_ptr<RunningStorm> storm(new RunningStorm());
  RunningStorm* self = storm.get();
  storm->thread_ = std::thread([self, plan = std::move(plan)] {
    // A storm keeps a schedule of a frame every millisecond or so while the replays' engines poll
    // every core: at the lowest real-time priority its wake-ups come on time instead of after
    // theirs (it sleeps between frames, so it takes them almost nothing). Without the privilege
    // it runs as it is, late frames skipped and counted.
    const sched_param lowest{sched_get_priority_min(SCHED_FIFO)};
    if (int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &lowest); err != 0) {
      logging::get("faults")->debug("PFC storm: no real-time priority ({})", err);
    }
    std::unique_ptr<netns::Scope> scope;
    if (!plan.netns.empty()) {
      auto entered = netns::Scope::enter(plan.netns);
      if (!entered.ok()) {
        self->result_ = entered.status().with_context("PFC storm from " + plan.ifname);
        return;
      }
      scope = std::move(entered).value();
    }
    self->result_ = injectors::run_pfc_storm(plan.ifname, plan.options, &self->stop_);
  });
  return storm;
}

Result<injectors::PfcStormResult> RunningStorm::stop() {
  if (!joined_) {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    joined_ = true;
  }
  return result_;
}

RunningStorm::~RunningStorm() { (void)stop(); }

}  // namespace collide::orchestrator::faults
