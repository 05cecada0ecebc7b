#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collide/scenario.pb.h"

// Several jobs at once on one testbed (Scenario.jobs): where each job's ranks run, and the names
// of the runs that replay one job by itself.
namespace collide::orchestrator {

// Variants named "alone:<job>" replay one job with the others idle (runs.alone).
inline constexpr std::string_view kAlonePrefix = "alone:";

std::string alone_variant(const std::string& job);

// The testbed-wide (global) rank of each of the job's ranks, in the job's rank order: rank r runs
// on host hosts[r / ranks_per_host] as its local rank r % ranks_per_host.
std::vector<uint32_t> job_global_ranks(const v1::Job& job, uint32_t ranks_per_host);

// The variants of `scenario` with a fault that acts on the job: on one of its hosts' links, or on a
// fabric link (which may carry any job's frames). In the variants with faults not named here the
// job is spared by them (report/job_results.h: victims).
std::vector<std::string> variants_faulting(const v1::Scenario& scenario, const v1::Job& job);

}  // namespace collide::orchestrator
