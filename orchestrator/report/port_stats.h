#pragma once

#include <cstdint>
#include <string>
#include <vector>

// What one switch port's egress queue did over a run, as its qdiscs counted it (sampled through
// the run by orchestrator/testbed/port_telemetry.h).
namespace collide::orchestrator::report {

// A queue the PFC watchdog found held too long (nanoseconds since the port's sampling started).
struct PfcWatchdogEventStats {
  int64_t held_since_ns = 0;
  int64_t detected_ns = 0;
  int64_t restored_ns = 0;  // 0: still recovering at the run's end
};

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
  // Lossless fabrics only (orchestrator/testbed/pfc_switches.h).
  bool lossless = false;
  uint32_t pfc_priority = 0;
  uint64_t pause_frames = 0;       // the peer's pause frames that held this queue
  uint64_t paused_ns = 0;          // how long they held it
  uint64_t pause_frames_sent = 0;  // pauses and resumes sent to the peer
  std::vector<PfcWatchdogEventStats> watchdog_events;
  uint64_t deadlocks = 0;      // times found in a cycle of paused queues (a PFC deadlock)
  uint64_t deadlocked_ns = 0;  // time spent in one
};

}  // namespace collide::orchestrator::report
