#pragma once

#include <string>
#include <vector>

#include "orchestrator/report/report.h"

// Priority flow control at the hosts, per variant: the pause frames the NICs received from their
// leaf ports and how long these held their sending, the pause and resume frames lossless NICs
// sent their leaf ports while their receive side fell behind, and what NICs dropped instead with
// their receive buffer full (a slow receiver on a lossy fabric; all repetitions).
namespace collide::orchestrator::report {

struct HostFlowControlRow {
  std::string variant;
  uint64_t pause_frames = 0;       // received
  double paused_ms = 0;            // sending held by them
  uint64_t pause_frames_sent = 0;  // pauses and resumes
  uint64_t buffer_dropped = 0;     // frames dropped with a NIC's receive buffer full
};

// One row per variant whose NICs received or sent any, or dropped frames; empty when none did.
std::vector<HostFlowControlRow> host_flow_control_rows(const Report& report);
// The rows as the text summary prints them; empty without rows.
std::string host_flow_control_text(const Report& report);

}  // namespace collide::orchestrator::report
