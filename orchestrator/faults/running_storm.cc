#include "orchestrator/faults/running_storm.h"

#include "common/netns.h"
#include "common/realtime.h"

namespace collide::orchestrator::faults {
namespace {

// A frame every 100 us or slower leaves the thread asleep nearly all the time.
constexpr double kRealtimeFramesPerSecond = 10'000;

}  // namespace

std::unique_ptr<RunningStorm> RunningStorm::start(StormPlan plan) {
  std::unique_ptr<RunningStorm> storm(new RunningStorm());
  RunningStorm* self = storm.get();
  storm->thread_ = std::thread([self, plan = std::move(plan)] {
    // On schedule beside the replays' polling engines, as long as it sleeps between frames: a
    // storm faster than kRealtimeFramesPerSecond would spin at real-time priority and take a core.
    if (plan.options.frames_per_second <= kRealtimeFramesPerSecond) {
      realtime::lowest_realtime_priority("PFC storm from " + plan.ifname);
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
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return result_;
}

RunningStorm::~RunningStorm() { (void)stop(); }

}  // namespace collide::orchestrator::faults
