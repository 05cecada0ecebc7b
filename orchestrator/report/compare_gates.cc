#include "orchestrator/report/compare_gates.h"

#include <fmt/format.h>

#include "common/parse_number.h"
#include "orchestrator/report/compare_output.h"

namespace collide::orchestrator::report {
namespace {

constexpr const char kJctRatioBelow[] = "jct-ratio-below=";

// "JCT 1.042 (0.981..1.107)": the value a gate rests on.
std::string jct_text(const RatioInterval& r) { return "JCT B/A " + ratio_text(r); }

ExpectationOutcome not_judged(std::string name, std::string why) {
  return {std::move(name), Verdict::kError, "", std::move(why)};
}

ExpectationOutcome no_worse(const VariantComparison& v, double level) {
  const std::string name = fmt::format("{}: no worse than A", v.name);
  if (v.jct.verdict == CompareVerdict::kTooFewRuns) {
    return not_judged(name, "too few repetitions for an interval (2 on a side and 3 in all are needed)");
  }
  std::vector<std::string> worse;
  if (v.jct.verdict == CompareVerdict::kWorse) worse.push_back("JCT");
  size_t rows_worse = 0;  // a row counts once, whether its p50, its p99 or both are worse
  for (const CompareRow& row : v.rows) {
    bool row_worse = false;
    for (const auto& [stat, r] : {std::pair{"p50", &row.p50}, std::pair{"p99", &row.p99}}) {
      if (r->verdict == CompareVerdict::kWorse) {
        worse.push_back(fmt::format("{} {} B {} {}", row.kind, row.size_bytes, stat, ratio_text(*r)));
        row_worse = true;
      }
    }
    rows_worse += row_worse;
  }
  const std::string measured = fmt::format("{}; {} of {} collective rows' p50 or p99 worse", jct_text(v.jct),
                                           rows_worse, v.rows.size());
  if (worse.empty()) return {name, Verdict::kPass, measured, ""};
  std::string why = fmt::format("detectably worse at {:g}%:", level * 100);
  for (const std::string& w : worse) why += " " + w + ";";
  why.pop_back();
  return {name, Verdict::kFail, measured, why};
}

ExpectationOutcome jct_ratio_below(const VariantComparison& v, double bound) {
  const std::string name = fmt::format("{}: JCT B/A < {:g} (upper end of the interval)", v.name, bound);
  if (v.jct.verdict == CompareVerdict::kTooFewRuns) {
    return not_judged(name, "too few repetitions for an interval (2 on a side and 3 in all are needed)");
  }
  if (v.jct.high < bound) return {name, Verdict::kPass, jct_text(v.jct), ""};
  return {name, Verdict::kFail, jct_text(v.jct),
          fmt::format("the interval reaches {:.3f}, not below {:g}", v.jct.high, bound)};
}

}  // namespace

Status parse_compare_gate(const std::string& text, CompareGates& gates) {
  if (text == "no-worse") {
    gates.no_worse = true;
    return {};
  }
  if (text.rfind(kJctRatioBelow, 0) == 0) {
    const std::string value = text.substr(sizeof(kJctRatioBelow) - 1);
    auto bound = parse_number<double>(value, "--expect jct-ratio-below");
    if (!bound.ok()) return bound.status();
    if (!(*bound > 0)) {
      return invalid_argument(fmt::format("--expect {}: '{}' is not a positive ratio", text, value));
    }
    gates.jct_ratio_below = *bound;
    return {};
  }
  return invalid_argument(fmt::format(
      "--expect {}: not a gate (no-worse, or jct-ratio-below=RATIO such as jct-ratio-below=1.2)", text));
}

std::vector<ExpectationOutcome> judge_comparison(const Comparison& c, const CompareGates& gates) {
  std::vector<ExpectationOutcome> out;
  for (const VariantComparison& v : c.variants) {
    if (!v.in_a || !v.in_b) {
      out.push_back(not_judged(fmt::format("{}: in both runs", v.name),
                               fmt::format("the variant is only in {}", v.in_a ? "A" : "B")));
      continue;
    }
    if (gates.no_worse) out.push_back(no_worse(v, c.level));
    if (gates.jct_ratio_below) out.push_back(jct_ratio_below(v, *gates.jct_ratio_below));
  }
  return out;
}

}  // namespace collide::orchestrator::report
