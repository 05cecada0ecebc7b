#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "injectors/guardian.h"
#include "orchestrator/faults/fault_plan.h"
#include "orchestrator/faults/phase_name.h"
#include "orchestrator/testbed/testbed_plan.h"

// A fabric link's failure in the phases fabrics go through (Fault.detection_ns, convergence_ns):
// the link first loses everything while routes still use it (a blackhole rule of the fault
// program), then goes down, which its leaf sees at once (the kernel skips the dead next hop of
// its multipath route) while the spine's routes to the leaf's hosts go with the link; what the
// other leaves still hash onto that spine towards those hosts is dropped there for want of a
// route until routing converges: then every other leaf routes the failed leaf's prefixes over its
// other spines (converged_routes). The spine's own count of packets it had no route for
// (IpExt InNoRoutes) is the loss of the phases after detection.
namespace collide::orchestrator::faults {

// What the other leaves route differently once routing has converged around the failed link of
// `site` (a leaf-spine link): every prefix the spine reached through that link, from every other
// leaf over the spines that leaf keeps. A leaf left without a spine gets none.
std::vector<testbed::PlannedRoute> converged_routes(const testbed::TestbedPlan& plan, const FaultSite& site);

// IpExt InNoRoutes in the text of /proc/net/netstat: packets the namespace could not route.
Result<uint64_t> in_no_routes(std::string_view netstat);
// The same, read in namespace `netns` by the calling thread.
Result<uint64_t> read_in_no_routes(const std::string& netns);

// Converged routes in place on their leaves until withdraw() or destruction, each leaf's
// registered with the guardian before it is changed, so that no route outlives a dead collide.
class ConvergedRoutes {
 public:
  static Result<std::unique_ptr<ConvergedRoutes>> install(injectors::Guardian& guardian,
                                                          const std::vector<testbed::PlannedRoute>& routes,
                                                          const std::string& fault);
  ~ConvergedRoutes() { withdraw(); }
  ConvergedRoutes(const ConvergedRoutes&) = delete;
  ConvergedRoutes& operator=(const ConvergedRoutes&) = delete;
  // Back to the routes the testbed was built with. Idempotent.
  void withdraw();

 private:
  explicit ConvergedRoutes(injectors::Guardian& guardian) : guardian_(guardian) {}
  injectors::Guardian& guardian_;
  std::vector<uint64_t> undo_ids_;
};

}  // namespace collide::orchestrator::faults
