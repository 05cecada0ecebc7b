#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "orchestrator/testbed/port_telemetry.h"
#include "orchestrator/testbed/testbed_plan.h"

struct port_ecn;  // the libbpf skeleton

namespace collide::injectors {
class TcLink;
}

// WRED-style ECN marking on the switch ports whose profile asks for it (ebpf/port_ecn.bpf.c): one
// program per port on its egress, in front of the port's shaper, configured with the port's rate,
// burst, buffer and Kmin/Kmax/Pmax, attached for as long as this object lives. Built without
// eBPF, attaching fails when any port needs marking.
namespace collide::orchestrator::testbed {

struct MarkerCounts {
  uint64_t marked = 0;       // frames marked CE
  uint64_t early_drops = 0;  // frames that were not ECN-capable, dropped instead
};

class PortEcnMarkers {
 public:
  // Every switch port of `plan` whose queue marks; none is an empty set.
  static Result<std::unique_ptr<PortEcnMarkers>> attach(const TestbedPlan& plan);
  ~PortEcnMarkers();
  PortEcnMarkers(const PortEcnMarkers&) = delete;
  PortEcnMarkers& operator=(const PortEcnMarkers&) = delete;

  // Counts so far, by "<netns>/<ifname>".
  std::map<std::string, MarkerCounts> counts() const;

 private:
  struct Port;
  PortEcnMarkers() = default;
  std::vector<std::unique_ptr<Port>> ports_;
};

// The markers' counts as the port telemetry adds them to the qdiscs' own; `markers` must outlive
// the reader.
inline ExtraCountsReader marker_counts(const PortEcnMarkers& markers) {
  return [&markers] {
    std::map<std::string, ExtraPortCounts> out;
    for (const auto& [port, c] : markers.counts()) out[port] = {c.marked, c.early_drops};
    return out;
  };
}

}  // namespace collide::orchestrator::testbed
