#pragma once

#include <string>

#include "orchestrator/report/report.h"

namespace collide::orchestrator::report {

// Per variant and tier, the ECMP max/mean ratio and Jain's index (ecmp_balance.h), with the JCT
// beside them, as plain text; empty when no variant ran on a virtual fabric with spines.
std::string ecmp_table(const Report& report);

}  // namespace collide::orchestrator::report
