#pragma once

#include <string>

#include "common/result.h"

namespace collide::traces {

// Writes a copy of a trace whose op sizes are multiplied by `factor` (counts scale with them;
// every op that had data keeps at least one element), so a large job's traffic pattern fits a
// testbed. Compute gaps scale too: the job keeps its shape in time. The header records the factor.
Status scale_trace(const std::string& in, const std::string& out, double factor);

}  // namespace collide::traces
