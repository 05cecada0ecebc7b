#pragma once

#include <string>

#include "orchestrator/report/report.h"

// What `collide run` prints when it is done: per variant the nccl-tests-style table of its
// collectives (and, when the trace measured them in production, production vs replay times), then one line per variant with JCT, slowdown against the baseline (95% CI over
// repetitions), the collective tail and the transport's retransmissions and timeouts, then
// failures and where the full report went.
namespace collide::orchestrator::report {

std::string size_tables(const Report& report);
std::string jct_table(const Report& report);
// Per variant, the bytes each leaf (with its rail) and each spine carried; empty without a
// virtual testbed's counters.
std::string fabric_table(const Report& report);
// Both tables, failures, and the paths of the report files (empty paths are left out).
std::string run_summary(const Report& report, const std::string& html_path,
                        const std::string& json_path);

}  // namespace collide::orchestrator::report
