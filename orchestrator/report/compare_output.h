#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "orchestrator/report/compare.h"

// A comparison of two runs as a text table (stdout), JSON and a self-contained HTML page.
namespace collide::orchestrator::report {

std::string comparison_text(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);
// The two runs side by side; `a` and `b` give each run's scenario and description.
std::string comparison_html(const Comparison& c, const v1::Results& a, const v1::Results& b);

// "1.234 (1.100..1.390)" or "1.234 (-)" without an interval.
std::string ratio_text(const RatioInterval& r);

}  // namespace collide::orchestrator::report
