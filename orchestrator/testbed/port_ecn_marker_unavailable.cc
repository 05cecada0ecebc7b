// PortEcnMarkers in a build without eBPF: a testbed that asks no port to mark needs none.
#include "orchestrator/testbed/port_ecn_marker.h"

struct port_ecn {};

namespace collide::orchestrator::testbed {

struct PortEcnMarkers::Port {};

Result<std::unique_ptr<PortEcnMarkers>> PortEcnMarkers::attach(const TestbedPlan& plan) {
  for (const PlannedLink& l : plan.links) {
    if (l.a.queue.ecn || l.b.queue.ecn) {
      return failed_precondition("ECN marking on switch ports needs eBPF, and this build is without it");
    }
  }
  return std::unique_ptr<PortEcnMarkers>(new PortEcnMarkers());
}

PortEcnMarkers::~PortEcnMarkers() = default;

std::map<std::string, MarkerCounts> PortEcnMarkers::counts() const { return {}; }

}  // namespace collide::orchestrator::testbed
