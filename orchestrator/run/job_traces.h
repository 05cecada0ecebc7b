#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

// Several jobs at once as one trace: the replayer runs each rank's ops, so jobs on disjoint ranks
// that never share a communicator run side by side with nothing else to arrange.
namespace collide::orchestrator {

struct JobTrace {
  std::string name;                   // prefixes the job's communicator ids ("tenant/world")
  std::string path;                   // the job's own trace, its ranks 0..n-1
  std::vector<uint32_t> global_ranks;  // where each of its ranks runs in the testbed
};

// Writes to `out` one trace of `world` ranks holding every op of the given jobs, each rank renamed
// to its global rank and each communicator made the job's own; ranks of no job issue nothing.
// A job whose trace has other than global_ranks.size() ranks, or two jobs on one rank, is an
// error naming the job.
Status merge_job_traces(const std::vector<JobTrace>& jobs, uint32_t world, const std::string& out);

}  // namespace collide::orchestrator
