#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "injectors/link_flap.h"
#include "orchestrator/faults/bgp_phases.h"
#include "orchestrator/faults/fault_plan.h"
#include "orchestrator/faults/link_failure.h"
#include "orchestrator/faults/running_storm.h"
#include "orchestrator/report/run_result.h"
#include "orchestrator/testbed/testbed_plan.h"

namespace collide::injectors {
class FaultInjector;
class Guardian;
class LinkDown;
class RateLimit;
}  // namespace collide::injectors

// The faults of one run, armed on a virtual testbed and disarmed when the object goes.
//
// Per-packet faults (loss, burst loss, blackhole, corruption, ECN marks) are rules of the eBPF
// rule engine, with their windows evaluated in the kernel, behind a lease the injector renews:
// they go inert within the lease if collide dies, and their TCX links go with the process.
// Link flaps and rate limits are changes of links and qdiscs, made and undone on schedule by a
// thread of this object, each registered with a guardian process first so that they are undone
// even after a SIGKILL. A flap of a fabric link with phases (detection_ns, convergence_ns) is a
// link failure (link_failure.h): a blackhole rule first, then the link down, then routes of the
// other leaves around it; each phase has a window of its own ("name/detection", ...). PFC storms
// are sent by a thread of their own from their window's start (nothing to undo: a storm ends with
// its thread, and its last pause with its quanta), their frames counted as the fault's packets. Slow receivers and send delays are the replayer's (fault_plan.h:
// replayer_hook_flags); here they are only recorded.
namespace collide::orchestrator::faults {

struct ArmOptions {
  uint32_t repetition = 0;  // offsets every seed: each repetition draws other packets
  uint64_t runs_seed = 0;   // the scenario's Runs.seed (fault_plan.h: draw_seed)
  // The moment fault windows count from (CLOCK_MONOTONIC, as steady_clock). Unset: the moment
  // arming is done, so that the caller starts its replays right after arm_faults() returns. In
  // the future: arm_faults() returns at that moment, rules armed. In the past: windows are
  // shortened by the time gone.
  std::optional<std::chrono::steady_clock::time_point> run_start;
  // False: load and attach only (rules inert), and let the caller start() the faults when its
  // run starts, e.g. an agent that prepares before the orchestrator says go.
  bool start_now = true;
  // Undoes flaps and rate limits if collide dies. Null: one is started when a fault needs it
  // (forking; best before other threads exist).
  injectors::Guardian* guardian = nullptr;
  std::chrono::milliseconds lease{3000};
  // Where each fault acts, instead of looking its link up in the plan: a real host's agent
  // places its faults on its own NIC.
  std::function<Result<FaultSite>(const v1::Fault&)> site_of;
};

class ArmedFaults {
 public:
  ~ArmedFaults();
  ArmedFaults(const ArmedFaults&) = delete;
  ArmedFaults& operator=(const ArmedFaults&) = delete;

  // Arms what arm_faults() prepared, windows counting from `run_start` (unset: now; in the
  // future: returns at that moment; in the past: windows begin late by the time gone, and the
  // ground truth says so). Once only.
  Status start(std::optional<std::chrono::steady_clock::time_point> run_start = std::nullopt);
  bool started() const { return started_; }
  size_t size() const { return faults_.size(); }
  std::chrono::steady_clock::time_point run_start() const { return run_start_; }
  // Ends every fault now: rules inert, links up with their addresses, routes and neighbours,
  // qdiscs gone. The counters are read first and kept. Idempotent.
  void disarm();
  // Per fault, in the order given: what the injectors counted and when each fault really held
  // (CLOCK_MONOTONIC ns, the replayers' time base). Counters are read now, or kept from disarm().
  std::vector<report::FaultWindow> ground_truth();
  // The first failure of a scheduled change (a flap or rate limit that could not be made).
  Status error() const;

 private:
  friend Result<std::unique_ptr<ArmedFaults>> arm_faults(const std::vector<const v1::Fault*>&,
                                                         const testbed::TestbedPlan&,
                                                         const ArmOptions&);
  ArmedFaults() = default;

  // A fault of the fabric changed or sent on a schedule (flap, rate limit, PFC storm), on its own
  // thread's clock.
  struct Scheduled {
    size_t fault = 0;  // index into faults_
    FaultSite site;
    std::optional<injectors::LinkSnapshot> snapshot;  // a flap's, taken when armed
    std::unique_ptr<injectors::LinkDown> down;
    std::vector<std::unique_ptr<injectors::RateLimit>> limits;
    std::optional<StormPlan> storm_plan;  // a storm's, worked out when armed
    std::unique_ptr<RunningStorm> storm;
    bool done = false;
    // A link failure's phases after detection: the link down, then (if routing converges within
    // the flap) the other leaves' routes around it. Phase windows are entries of faults_.
    struct Failure {
      std::optional<size_t> detection_entry;
      size_t convergence_entry = 0;
      std::optional<size_t> converged_entry;
      std::vector<testbed::PlannedRoute> converged_routes;
      std::string spine_netns;  // drops here for want of a route are the phases' loss
      // The spine's InNoRoutes when the current phase began; unknown if it could not be read.
      std::optional<uint64_t> no_routes_at;
      std::chrono::steady_clock::time_point down_at;  // convergence counts from here
      size_t phase_entry = 0;     // the phase under way
      std::unique_ptr<ConvergedRoutes> routes;
    };
    std::optional<Failure> failure;
  };
  struct Entry {
    v1::Fault fault;  // a copy: the caller's faults need not outlive this object
    std::unique_ptr<injectors::FaultInjector> injector;  // per-packet faults
    report::FaultWindow window;
  };
  // A fabric link's failure under routing: bgp, whose phases the leaves' routes tell (bgp_phases.h).
  struct BgpFailure {
    size_t fault = 0;  // entries of faults_: the fault, then its phase windows
    size_t detection = 0, convergence = 0, restoration = 0;
    BgpTable whole, without_link;
  };

  Status begin(Scheduled& s);
  Status converge(Scheduled& s);
  void end(Scheduled& s);
  // A link failure's phase under way ends now with the loss the spine counted since it began;
  // `next` (an entry) begins.
  void next_phase(Scheduled::Failure& f, std::optional<size_t> next);
  // The spine's count of packets it had no route for; unknown (logged) if it cannot be read.
  static std::optional<uint64_t> spine_no_routes(const Scheduled::Failure& f);
  void run_schedule();
  void read_counters();
  // Times each BGP failure's phase windows from what the watch of the leaves' routes saw; `final`
  // (when disarmed) also logs how far BGP got.
  void measure_bgp_phases(const std::vector<BgpObservation>& seen, bool final);

  std::vector<Entry> faults_;
  std::vector<Scheduled> scheduled_;
  std::vector<BgpFailure> bgp_failures_;
  std::unique_ptr<BgpRouteWatch> bgp_watch_;  // from arming to disarming, if any BgpFailure
  std::unique_ptr<injectors::Guardian> own_guardian_;
  injectors::Guardian* guardian_ = nullptr;
  std::chrono::steady_clock::time_point run_start_;
  bool started_ = false;
  bool disarmed_ = false;

  std::thread scheduler_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  Status error_;
};

// Arms every fault of a run on `plan` (see ArmOptions for when windows count from). On failure
// nothing stays armed.
Result<std::unique_ptr<ArmedFaults>> arm_faults(const std::vector<const v1::Fault*>& faults,
                                                const testbed::TestbedPlan& plan,
                                                const ArmOptions& options);

}  // namespace collide::orchestrator::faults
