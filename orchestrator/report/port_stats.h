#pragma once

#include <cstdint>
#include <string>
#include <vector>

// What one switch port's egress queue did over a run, as its qdiscs counted it (sampled through
// the run by orchestrator/testbed/port_telemetry.h).
namespace collide::orchestrator::report {

struct PortStats {
  std::string link;   // the link, as reports name it: "leaf0-spine1", "h1.nic0-leaf0"
  std::string end;    // the switch whose queue this is: "leaf0"
  std::string tier;   // "leaf_down", "leaf_up", "spine_down"
  double gbps = 0;    // its line rate; 0: unshaped
  uint64_t bytes = 0;    // sent out of the queue
  uint64_t packets = 0;
  uint64_t drops = 0;
  uint64_t ecn_marks = 0;
  uint64_t depth_p95_bytes = 0;  // queue depth over the samples
  uint64_t depth_max_bytes = 0;
  uint64_t samples = 0;
  double bin_seconds = 0;          // width of each utilization bin
  std::vector<double> utilization;  // fraction of the line rate per bin (bytes per bin when unshaped)
};

}  // namespace collide::orchestrator::report
