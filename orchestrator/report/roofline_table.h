#pragma once

#include <string>

#include "orchestrator/report/report.h"

namespace collide::orchestrator::report {

// Per variant, its mean JCT against the job's roofline (the least time its bytes need at line
// rate on the fabric's busiest port, orchestrator/run/roofline.h) and where that port is, as plain
// text; empty when no variant's roofline is known.
std::string roofline_table(const Report& report);

}  // namespace collide::orchestrator::report
