#pragma once

#include <string>
#include <vector>

#include "orchestrator/report/report.h"

// Priority flow control at the hosts, per variant: the pause frames the NICs received from their
// leaf ports and how long these held their sending, and the pause and resume frames lossless NICs
// sent their leaf ports while their receive side fell behind (all repetitions).
namespace collide::orchestrator::report {

struct HostFlowControlRow {
  std::string variant;
  uint64_t pause_frames = 0;       // received
  double paused_ms = 0;            // sending held by them
  uint64_t pause_frames_sent = 0;  // pauses and resumes
};

// One row per variant whose NICs received or sent any; empty when none did.
std::vector<HostFlowControlRow> host_flow_control_rows(const Report& report);
// The rows as the text summary prints them; empty without rows.
std::string host_flow_control_text(const Report& report);

}  // namespace collide::orchestrator::report
