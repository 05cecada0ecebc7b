#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "orchestrator/testbed/testbed_plan.h"

// A fabric link's failure under routing: bgp, measured rather than modeled: BFD (or the lost
// signal) and BGP decide when the leaves stop routing over the failed link and when they take it
// back, and a watch of every leaf's routing table times those moments:
// - detection: from the failure until a leaf first drops the failed spine from a route;
// - convergence: from then until every leaf holds the routes of the fabric without the link;
// - return: from the link's return until every leaf holds the whole fabric's routes again.
namespace collide::orchestrator::faults {

// Every leaf's BGP routes: (leaf namespace, prefix) -> how many next hops (spines) it has.
using BgpTable = std::map<std::pair<std::string, std::string>, size_t>;

// The routes a converged fabric holds (testbed::bgp_converged_routes), with every link of `plan`
// or without the link between `leaf` and `spine` (namespaces).
BgpTable expected_bgp_table(const testbed::TestbedPlan& plan);
BgpTable expected_bgp_table(const testbed::TestbedPlan& plan, const std::string& leaf,
                            const std::string& spine);

// What one leaf held at one moment (ns on the fault windows' clock): every BGP route it had.
struct BgpObservation {
  uint64_t at = 0;
  std::string leaf;
  std::vector<std::pair<std::string, size_t>> routes;  // read_bgp_routes
};

// The moments of the phases; unset where a phase did not end (a failure shorter than BFD's
// detection time moves no route, a run may end before the routes are back).
struct BgpPhases {
  std::optional<uint64_t> first_withdrawal;  // a leaf first held fewer next hops than the whole fabric
  std::optional<uint64_t> converged;         // every leaf held the fabric without the link
  std::optional<uint64_t> restored;          // after the return, every leaf held the whole fabric
};

// The phases of a failure from `failed_at` to `returned_at` (0: it had not returned when the
// observations end), from observations in time order that start with every leaf's table (pure).
BgpPhases bgp_phases(const std::vector<BgpObservation>& observations, const BgpTable& whole,
                     const BgpTable& without_link, uint64_t failed_at, uint64_t returned_at);

// Watches the leaves of a BGP fabric from a thread of its own until stopped: each leaf's
// `ip monitor route` says when its table changed, and the table is then read whole.
class BgpRouteWatch {
 public:
  static std::unique_ptr<BgpRouteWatch> start(const testbed::TestbedPlan& plan);
  ~BgpRouteWatch();
  BgpRouteWatch(const BgpRouteWatch&) = delete;
  BgpRouteWatch& operator=(const BgpRouteWatch&) = delete;

  // What was seen so far, in time order.
  std::vector<BgpObservation> seen();
  // Stops watching; what was seen, in time order.
  std::vector<BgpObservation> stop();

 private:
  explicit BgpRouteWatch(std::vector<std::string> leaves) : leaves_(std::move(leaves)) {}
  void run();
  // Reads the leaf's table as it was at `at` (when its monitor reported the change).
  void read(const std::string& leaf, uint64_t at);

  std::vector<std::string> leaves_;
  std::mutex mutex_;
  std::vector<BgpObservation> seen_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace collide::orchestrator::faults
