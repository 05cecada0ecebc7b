#pragma once

#include <string>
#include <vector>

#include "collide/results.pb.h"
#include "orchestrator/report/curve_svg.h"
#include "orchestrator/report/report.h"

// A sweep's answer: what each point of the grid did (from that point's own report), and the
// curves drawn from it against each swept field.
namespace collide::orchestrator::report {

// What the sweep keeps of one point's report; `directory` is where that report went, relative to
// the sweep's own files.
v1::SweepPointResults sweep_point_results(const Report& point, const std::string& directory);

// Per swept field, two charts: the slowdown of each variant against its point's baseline (with
// the 95% interval; the baseline's own spread around 1 drawn as the reference), and the p99
// collective completion time of every variant, the baseline too.
// With several swept fields, each combination of the others' values is a curve of its own.
// Points whose runs all failed are left out of the curves (the sweep's table still lists them).
std::vector<CurveChart> sweep_charts(const v1::SweepResults& sweep);

// sweep.json: the schema's canonical JSON, as report.json is.
std::string sweep_json(const v1::SweepResults& sweep);

// report.html of a sweep: one row per point (its settings, each variant's slowdown, p99 and JCT,
// a link to the point's own page), then the charts inline.
std::string render_sweep_html(const v1::SweepResults& sweep, const std::vector<CurveChart>& charts);

}  // namespace collide::orchestrator::report
