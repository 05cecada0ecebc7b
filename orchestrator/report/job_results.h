#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collide/results.pb.h"
#include "orchestrator/report/run_result.h"

// Several jobs at once on one fabric: each job's own completion time in every variant, and what
// the jobs do to each other (each job together, in the baseline, against alone).
namespace collide::orchestrator::report {

struct JobRanks {
  std::string name;
  std::vector<uint32_t> hosts;
  std::vector<uint32_t> ranks;  // global
  std::string alone_variant;    // the variant that runs this job by itself; empty: none
  // Variants with a fault on one of this job's hosts, or on a fabric link (which may carry any
  // job): in the others with faults the job is spared, and a slowdown there makes it a victim.
  std::vector<std::string> faulted_in;
};

// A spared job slowed at least this much (the low end of its slowdown's interval) is a victim.
// Jobs that faults spare vary within about 5% on a machine of 2 busy cores (bystanders of a lossy
// slow receiver measured 0.95-0.97).
inline constexpr double kVictimSlowdown = 1.1;

// The job's completion time in one run: its ranks' first op start to their last op end; 0 when
// none of its ranks ran anything.
uint64_t job_completion_ns(const RunResult& run, const JobRanks& job);

// Each job with ops in `runs` (one variant's runs; failed ones are left out): its JCT per run,
// their means and interval, and against `baseline_jct_mean` (the job's mean JCT in the baseline,
// by job in `jobs` order; 0 or empty: no slowdown).
std::vector<v1::JobResults> job_results(const std::vector<JobRanks>& jobs, const std::vector<const RunResult*>& runs,
                                        const std::vector<double>& baseline_jct_mean);

// Each job with an alone variant: its JCTs together (`together`, the baseline's job results)
// against alone (`alone[k]`, the job's results in its alone variant, or null when none ran).
std::vector<v1::JobInterference> job_interference(const std::vector<JobRanks>& jobs,
                                                  const std::vector<v1::JobResults>& together,
                                                  const std::vector<const v1::JobResults*>& alone);

struct Report;
// Fills each variant's jobs (spared jobs and victims marked) and the report's interference.
void add_job_results(Report& report, const std::vector<JobRanks>& jobs, const std::vector<RunResult>& runs);

// For the terminal: each variant's JCT per job, the victims, then each job together against
// alone. Empty without jobs.
std::string jobs_text(const Report& report);

}  // namespace collide::orchestrator::report
