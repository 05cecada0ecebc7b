#pragma once

#include <filesystem>
#include <string>

#include "collide/scenario.pb.h"
#include "common/result.h"

namespace collide::orchestrator {

// Writes the scenario's workload as a collide trace for `world` ranks into `dir` and returns its
// path: the given trace, the job `synth` describes (synthesized here), `collectives` as the same
// op on every rank of one communicator, `count` times per iteration, or `incast` as sends from
// its senders to its receiver; traces are scaled by bytes_scale. The scenario should have passed validation; sizes are checked again here.
Result<std::string> prepare_workload(const v1::Scenario& scenario, uint32_t world,
                                     const std::filesystem::path& dir);

}  // namespace collide::orchestrator
