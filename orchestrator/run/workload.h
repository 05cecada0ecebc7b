#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/run/job_traces.h"

namespace collide::orchestrator {

// Writes the scenario's workload as a collide trace for `world` ranks into `dir` and returns its
// path: the given trace, the job `synth` describes (synthesized here), `collectives` as the same
// op on every rank of one communicator, `count` times per iteration, or `incast` as sends from
// its senders to its receiver; traces are scaled by bytes_scale. The scenario should have passed validation; sizes are checked again here.
Result<std::string> prepare_workload(const v1::Scenario& scenario, uint32_t world,
                                     const std::filesystem::path& dir);

// Several jobs at once (scenario.jobs): each job's workload prepared as the scenario's would be,
// for its own ranks, then all of them as one trace of `world` ranks (job_traces.h), and with
// runs.alone each job by itself on the same ranks, the others idle.
struct JobsWorkload {
  std::string together;
  std::vector<std::pair<std::string, std::string>> alone;  // (job, trace), in the scenario's order
};
Result<JobsWorkload> prepare_jobs_workload(const v1::Scenario& scenario, uint32_t world,
                                           const std::filesystem::path& dir);

}  // namespace collide::orchestrator
