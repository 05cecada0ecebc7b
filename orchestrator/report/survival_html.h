#pragma once

#include <string>

#include "collide/results.pb.h"

namespace collide::orchestrator::report {

// The survival section of a sweep's report.html: the arithmetic, one row per flap duration (survived,
// or where and why the job died), and the verdict. Empty when the sweep has none.
std::string survival_html(const v1::SweepResults& sweep);

}  // namespace collide::orchestrator::report
