#pragma once

#include <string>
#include <vector>

#include "orchestrator/report/report.h"

namespace collide::orchestrator::report {

// A self-contained HTML page (inline CSS and SVG, no scripts, no network): the summary table, the
// CDF of collective completion times per variant, each variant's nccl-tests table, and a
// timeline of every rank's ops in the first repetition of each variant with fault windows shaded.
std::string render_html(const Report& report, const std::vector<RunResult>& runs);

}  // namespace collide::orchestrator::report
