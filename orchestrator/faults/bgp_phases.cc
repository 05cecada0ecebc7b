#include "orchestrator/faults/bgp_phases.h"

#include <algorithm>
#include <chrono>

#include "common/logging.h"
#include "common/process.h"
#include "injectors/fault_injector.h"
#include "orchestrator/testbed/bgp_fabric.h"
#include "orchestrator/testbed/frr_daemons.h"

namespace collide::orchestrator::faults {
namespace {

using namespace std::chrono_literals;

BgpTable table_of(const std::vector<testbed::ConvergedRoute>& routes) {
  BgpTable table;
  for (const testbed::ConvergedRoute& r : routes) table[{r.netns, r.prefix}] = r.next_hops;
  return table;
}

// Whether `seen` holds, leaf by leaf, exactly the routes of `expected`.
bool holds(const BgpTable& seen, const BgpTable& expected) { return seen == expected; }

// How long a watch waits on one leaf's monitor before looking at the next: the phases' resolution.
constexpr auto kMonitorSlice = 5ms;
// A leaf whose monitor ended is read this often instead.
constexpr auto kPollInterval = 50ms;

}  // namespace

BgpTable expected_bgp_table(const testbed::TestbedPlan& plan) {
  return table_of(testbed::bgp_converged_routes(plan));
}

BgpTable expected_bgp_table(const testbed::TestbedPlan& plan, const std::string& leaf,
                            const std::string& spine) {
  testbed::TestbedPlan without = plan;
  std::erase_if(without.links, [&](const testbed::PlannedLink& l) {
    return (l.a.netns == leaf && l.b.netns == spine) || (l.a.netns == spine && l.b.netns == leaf);
  });
  return table_of(testbed::bgp_converged_routes(without));
}

BgpPhases bgp_phases(const std::vector<BgpObservation>& observations, const BgpTable& whole,
                     const BgpTable& without_link, uint64_t failed_at, uint64_t returned_at) {
  BgpPhases phases;
  BgpTable seen = whole;
  for (const BgpObservation& o : observations) {
    std::erase_if(seen, [&](const auto& entry) { return entry.first.first == o.leaf; });
    for (const auto& [prefix, hops] : o.routes) seen[{o.leaf, prefix}] = hops;
    if (o.at < failed_at) continue;
    if (returned_at == 0 || o.at < returned_at) {
      if (!phases.first_withdrawal) {
        for (const auto& [key, hops] : whole) {
          auto it = seen.find(key);
          if (it == seen.end() || it->second < hops) {
            phases.first_withdrawal = o.at;
            break;
          }
        }
      }
      if (!phases.converged && holds(seen, without_link)) phases.converged = o.at;
    } else if (phases.first_withdrawal && !phases.restored && holds(seen, whole)) {
      phases.restored = o.at;
    }
  }
  return phases;
}

std::unique_ptr<BgpRouteWatch> BgpRouteWatch::start(const testbed::TestbedPlan& plan) {
  std::vector<std::string> leaves;
  for (const testbed::PlannedNamespace& ns : plan.namespaces) {
    if (ns.role == testbed::Role::kLeaf) leaves.push_back(ns.name);
  }
  std::unique_ptr<BgpRouteWatch> watch(new BgpRouteWatch(std::move(leaves)));
  watch->thread_ = std::thread([w = watch.get()] { w->run(); });
  return watch;
}

BgpRouteWatch::~BgpRouteWatch() { stop(); }

std::vector<BgpObservation> BgpRouteWatch::seen() {
  std::lock_guard lock(mutex_);
  return seen_;
}

std::vector<BgpObservation> BgpRouteWatch::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  return seen();
}

void BgpRouteWatch::read(const std::string& leaf, uint64_t at) {
  auto routes = testbed::read_bgp_routes(leaf);
  if (!routes.ok()) {
    logging::get("faults")->warn("watching BGP's routes on {}: {}", leaf, routes.status().message());
    return;
  }
  std::lock_guard lock(mutex_);
  seen_.push_back({at, leaf, std::move(routes).value()});
}

void BgpRouteWatch::run() {
  // A monitor per leaf says when its kernel table changed; the table is then read whole (a
  // change is a handful of lines in ip's text, the whole table one JSON document).
  std::vector<std::optional<process::ChildProcess>> monitors;
  for (const std::string& leaf : leaves_) {
    auto child = process::ChildProcess::spawn({"ip", "-n", leaf, "monitor", "route"});
    if (child.ok()) {
      monitors.emplace_back(std::move(child).value());
    } else {
      logging::get("faults")->warn("watching BGP's routes on {}: {}", leaf, child.status().message());
      monitors.emplace_back(std::nullopt);
    }
  }
  // The monitors are listening: what changes from here on is seen.
  for (const std::string& leaf : leaves_) read(leaf, injectors::FaultInjector::monotonic_ns());
  auto polled = std::chrono::steady_clock::now();
  while (!stopping_) {
    const bool poll_due = std::chrono::steady_clock::now() - polled >= kPollInterval;
    for (size_t i = 0; i < leaves_.size() && !stopping_; ++i) {
      if (!monitors[i]) {
        if (poll_due) read(leaves_[i], injectors::FaultInjector::monotonic_ns());
        continue;
      }
      auto line = monitors[i]->read_line(kMonitorSlice);
      if (line.ok()) {
        // The table changed when its monitor said so; reading it takes a while after.
        const uint64_t at = injectors::FaultInjector::monotonic_ns();
        // Several lines come per change: take them all, then read once.
        while (monitors[i]->read_line(0ms).ok()) {
        }
        read(leaves_[i], at);
      } else if (line.status().code() != StatusCode::kDeadlineExceeded) {
        monitors[i].reset();  // its monitor ended: polled from now on
      }
    }
    if (poll_due) polled = std::chrono::steady_clock::now();
    if (std::none_of(monitors.begin(), monitors.end(), [](const auto& m) { return m.has_value(); })) {
      std::this_thread::sleep_for(kMonitorSlice);
    }
  }
}

}  // namespace collide::orchestrator::faults
