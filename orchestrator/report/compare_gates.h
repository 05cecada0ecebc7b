#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "orchestrator/report/compare.h"
#include "orchestrator/report/expectations.h"

// `collide compare --expect`: gates for nightly CI against a stored baseline run (A), judged on
// the comparison with tonight's run (B). Each gate is judged per variant the two runs share; a
// variant of one run only, or one with too few repetitions for an interval, cannot be judged and
// is an error, never a pass.
namespace collide::orchestrator::report {

struct CompareGates {
  // No detectable slowdown: neither the variant's JCT nor any collective row's p50 or p99 has the
  // verdict "worse" at the comparison's level.
  bool no_worse = false;
  // The upper end of the interval of the variant's JCT ratio B / A stays below this.
  std::optional<double> jct_ratio_below;

  bool any() const { return no_worse || jct_ratio_below.has_value(); }
};

// A gate as written on the command line ("no-worse", "jct-ratio-below=1.2") added to `gates`; an
// error says what is accepted.
Status parse_compare_gate(const std::string& text, CompareGates& gates);

// One outcome per gate and shared-or-not variant, in the comparison's variant order.
std::vector<ExpectationOutcome> judge_comparison(const Comparison& c, const CompareGates& gates);

}  // namespace collide::orchestrator::report
