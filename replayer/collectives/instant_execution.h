#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "replayer/collectives/step.h"

namespace collide::replayer::collectives {

struct ExecutionSummary {
  uint64_t steps = 0;
  uint64_t bytes_delivered = 0;   // all transfers
  uint64_t network_bytes = 0;     // transfers between hosts
  uint64_t rounds = 0;            // dependency depth: waves of steps that could run together
};

// Runs the expanded steps of every rank taking part in some ops as if every transfer were
// instant, and checks that the plan is sound: every send meets exactly one receive with the same
// tag and size, each rank's dependencies are acyclic (only on earlier steps), and everything
// completes, i.e. nothing waits forever. Errors name the first offending step.
Result<ExecutionSummary> execute_instantly(const std::vector<ExpandedOp>& ops);

}  // namespace collide::replayer::collectives
