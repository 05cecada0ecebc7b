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
// The page's parts, for a page of several comparisons (a sweep's points): its head up to the note
// on ratios, with each side's heading (HTML, escaped by the caller), and one comparison's variants
// under headings of the given tag ("h2").
std::string comparison_page_start(const std::string& a_label, const std::string& b_label,
                                  const std::string& a_heading, const std::string& b_heading, double level);
std::string comparison_variants_html(const Comparison& c, const char* heading);

// "1.234 (1.100..1.390)" or "1.234 (-)" without an interval.
std::string ratio_text(const RatioInterval& r);

}  // namespace collide::orchestrator::report
