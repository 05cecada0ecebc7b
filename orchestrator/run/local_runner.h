#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/report/run_result.h"

namespace collide::orchestrator {

struct LocalRunOptions {
  std::string collide_binary;         // started once per host for each run (`collide replay`)
  std::filesystem::path work_dir;     // traces, per-host results
  std::function<void(const std::string&)> progress;
  double run_timeout_s = 600;
};

// The embedded default: builds the scenario's virtual testbed, and for the baseline and each
// variant, each repetition, arms the variant's faults on the fabric, starts one replay per host
// (in its namespace, on DPDK's af_xdp), starts them together and collects what they recorded.
// Faults are disarmed and the testbed removed afterwards, also on failure. A run whose job fails
// (as NCCL would) is a result, not an error; an error means the scenario could not be run.
Result<std::vector<report::RunResult>> run_locally(const v1::Scenario& scenario,
                                                   const LocalRunOptions& options);

}  // namespace collide::orchestrator
