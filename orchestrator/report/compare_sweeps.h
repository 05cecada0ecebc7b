#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "collide/results.pb.h"
#include "common/result.h"
#include "orchestrator/report/compare.h"

// `collide compare A B` on two sweeps (two switches swept over the same loss rates, say): each
// point of A against the point of B that ran with the same values, as two runs are compared.
namespace collide::orchestrator::report {

// Whether `path` is a sweep's results: a directory holding sweep.json, or a sweep.json itself.
bool is_sweep(const std::string& path);

struct PointComparison {
  std::string label;                     // the point's values: "faults[0].probability=1%"
  std::string a_directory, b_directory;  // each point's own results, beside its sweep.json
  v1::Results a, b;
  Comparison comparison;
};

struct SweepComparison {
  std::string a_label, b_label;
  std::string a_scenario, b_scenario;
  double level = 0.95;
  std::vector<PointComparison> points;  // A's order
  // Points of one sweep only, and points of both that cannot be compared (one side has no
  // report: the point failed before it had results), each with why.
  std::vector<std::pair<std::string, std::string>> not_compared;
};

// Points match when they set the same fields to the same values ("1%" and "0.01" match). An
// error names the side and the file when a sweep.json cannot be read, when the two sweeps vary
// different fields, or when no point is in both.
Result<SweepComparison> compare_sweeps(const std::string& a, const std::string& b, double level);

std::string sweep_comparison_text(const SweepComparison& c);
nlohmann::json sweep_comparison_json(const SweepComparison& c);
std::string sweep_comparison_html(const SweepComparison& c);

}  // namespace collide::orchestrator::report
