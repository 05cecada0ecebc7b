#include "orchestrator/report/expectations.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <boost/math/distributions/binomial.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "orchestrator/scenario/expectations_check.h"
#include "traces/op_types.h"

namespace collide::orchestrator::report {
namespace {

using orchestrator::ExpectationCheck;

ExpectationOutcome pass(std::string measured) { return {"", Verdict::kPass, std::move(measured), ""}; }
ExpectationOutcome fail(std::string measured, std::string why) {
  return {"", Verdict::kFail, std::move(measured), std::move(why)};
}
ExpectationOutcome error(std::string why) { return {"", Verdict::kError, "", std::move(why)}; }

// "850 us", "12.5 ms", "2.31 s": three significant digits in the unit that suits.
std::string duration_text(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.3g} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3g} ms", seconds * 1e3);
  return fmt::format("{:.3g} s", seconds);
}

std::string statistic_text(const v1::Expectation& e) {
  return statistic_of(e) == v1::Expectation::STATISTIC_MEAN ? "mean" : "upper end of the 95% CI";
}

// " all_reduce of 4194304 B", or "" without a filter.
std::string filter_text(const v1::Expectation& e) {
  std::string out;
  if (e.collective() != v1::OP_KIND_UNSPECIFIED) out += fmt::format(" {}", traces::op_kind_name(e.collective()));
  if (e.bytes() != 0) out += fmt::format(" of {} B", e.bytes());
  return out.empty() ? out : " for" + out;
}

const v1::VariantResults* find_variant(const v1::Results& results, const std::string& name) {
  for (const v1::VariantResults& v : results.variants()) {
    if (v.name() == name) return &v;
  }
  return nullptr;
}

std::string no_results(const std::string& variant) {
  return fmt::format("variant '{}' has no results (the run did not reach it)", variant);
}

std::string none_completed(const v1::VariantResults& v) {
  return fmt::format("no repetition of '{}' completed ({} of {} failed)", v.name(), v.failed_runs(), v.runs());
}

// The figure a slowdown or JCT expectation rests on: the mean, or the upper end of the interval,
// which needs two completed repetitions.
struct Figure {
  double value = 0;
  std::string text;  // what it is, for the measured column
};

std::optional<Figure> pick(const v1::Expectation& e, double mean, double low, double high, size_t completed,
                           std::string_view unit, std::string& why) {
  if (statistic_of(e) == v1::Expectation::STATISTIC_MEAN) {
    return Figure{mean, fmt::format("mean over {} repetitions", completed)};
  }
  if (completed < 2) {
    why = fmt::format("the upper end of a 95% interval needs 2 completed repetitions, {} completed", completed);
    return std::nullopt;
  }
  return Figure{high, fmt::format("mean {:.3g}{}, 95% CI {:.3g}..{:.3g}{}, {} repetitions", mean, unit, low, high,
                                   unit, completed)};
}

ExpectationOutcome slowdown_below(const v1::Expectation& e, const v1::Results& results) {
  const v1::VariantResults* v = find_variant(results, e.variant());
  if (v == nullptr) return error(no_results(e.variant()));
  if (v->jct_seconds().empty()) return fail("", none_completed(*v));
  if (v->slowdown_ci95_size() != 2) return error("no slowdown: the baseline has no completed repetition");
  std::string why;
  auto f = pick(e, v->slowdown_mean(), v->slowdown_ci95(0), v->slowdown_ci95(1),
                static_cast<size_t>(v->jct_seconds_size()), "", why);
  if (!f) return error(why);
  const std::string measured = fmt::format("{:.3g}x ({})", f->value, f->text);
  if (f->value < e.slowdown_below()) return pass(measured);
  return fail(measured, fmt::format("slowdown {:.3g}x is not below {:.3g}x", f->value, e.slowdown_below()));
}

ExpectationOutcome jct_below(const v1::Expectation& e, const v1::Results& results) {
  const v1::VariantResults* v = find_variant(results, e.variant());
  if (v == nullptr) return error(no_results(e.variant()));
  if (v->jct_seconds().empty()) return fail("", none_completed(*v));
  std::string why;
  const double low = v->jct_ci95_seconds_size() == 2 ? v->jct_ci95_seconds(0) : v->jct_mean_seconds();
  const double high = v->jct_ci95_seconds_size() == 2 ? v->jct_ci95_seconds(1) : v->jct_mean_seconds();
  auto f = pick(e, v->jct_mean_seconds(), low, high, static_cast<size_t>(v->jct_seconds_size()), " s", why);
  if (!f) return error(why);
  const double limit = static_cast<double>(e.jct_below_ns()) / 1e9;
  const std::string measured = fmt::format("{} ({})", duration_text(f->value), f->text);
  if (f->value < limit) return pass(measured);
  return fail(measured, fmt::format("JCT {} is not below {}", duration_text(f->value), duration_text(limit)));
}

std::vector<const v1::SizeRow*> matching_rows(const v1::Expectation& e, const v1::VariantResults& v) {
  std::vector<const v1::SizeRow*> rows;
  for (const v1::SizeRow& r : v.sizes()) {
    if (e.collective() != v1::OP_KIND_UNSPECIFIED && r.kind() != traces::op_kind_name(e.collective())) continue;
    if (e.bytes() != 0 && r.size_bytes() != e.bytes()) continue;
    rows.push_back(&r);
  }
  return rows;
}

std::string no_matching_row(const v1::Expectation& e, const v1::VariantResults& v) {
  std::vector<std::string> seen;
  for (const v1::SizeRow& r : v.sizes()) seen.push_back(fmt::format("{} of {} B", r.kind(), r.size_bytes()));
  return fmt::format("'{}' measured no collective{} (it measured: {})", v.name(), filter_text(e),
                     seen.empty() ? "none" : fmt::format("{}", fmt::join(seen, ", ")));
}

ExpectationOutcome p99_below(const v1::Expectation& e, const v1::Results& results) {
  const v1::VariantResults* v = find_variant(results, e.variant());
  if (v == nullptr) return error(no_results(e.variant()));
  if (v->jct_seconds().empty()) return fail("", none_completed(*v));
  const double limit = static_cast<double>(e.p99_below_ns()) / 1e9;
  double worst_s = 0;
  std::string where;
  if (e.collective() == v1::OP_KIND_UNSPECIFIED && e.bytes() == 0) {
    if (v->collective_time_us().count() == 0) return error(fmt::format("'{}' completed no collective", v->name()));
    worst_s = v->collective_time_us().p99() / 1e6;
    where = fmt::format("over {} collectives", v->collective_time_us().count());
  } else {
    const auto rows = matching_rows(e, *v);
    if (rows.empty()) return error(no_matching_row(e, *v));
    const v1::SizeRow* worst = *std::max_element(rows.begin(), rows.end(), [](auto* a, auto* b) {
      return a->time_p99_us() < b->time_p99_us();
    });
    worst_s = worst->time_p99_us() / 1e6;
    where = fmt::format("{} of {} B, {} collectives", worst->kind(), worst->size_bytes(), worst->count());
  }
  const std::string measured = fmt::format("{} ({})", duration_text(worst_s), where);
  if (worst_s < limit) return pass(measured);
  return fail(measured, fmt::format("p99 {} is not below {}", duration_text(worst_s), duration_text(limit)));
}

ExpectationOutcome busbw_at_least(const v1::Expectation& e, const v1::Scenario& s, const v1::Results& results) {
  const v1::VariantResults* v = find_variant(results, e.variant());
  if (v == nullptr) return error(no_results(e.variant()));
  if (v->jct_seconds().empty()) return fail("", none_completed(*v));
  const std::optional<double> line_gbps = line_rate_gbps(e, s);
  if (!line_gbps) return error("no line rate is known");  // refused by the scenario check
  const auto rows = matching_rows(e, *v);
  if (rows.empty()) return error(no_matching_row(e, *v));
  // Every size that matches must reach the share: the slowest one decides.
  const v1::SizeRow* worst = *std::min_element(rows.begin(), rows.end(), [](auto* a, auto* b) {
    return a->busbw_gbps() < b->busbw_gbps();
  });
  const double share = worst->busbw_gbps() * 8 / *line_gbps;  // GB/s (1e9 bytes) to Gbit/s
  const std::string measured = fmt::format("{:.1f}% ({:.3g} GB/s busbw, {} of {} B, line rate {:g} Gbit/s)",
                                           share * 100, worst->busbw_gbps(), worst->kind(),
                                           worst->size_bytes(), *line_gbps);
  if (share >= e.busbw_at_least()) return pass(measured);
  return fail(measured, fmt::format("busbw {:.1f}% of line rate is below {:g}%", share * 100,
                                    e.busbw_at_least() * 100));
}

ExpectationOutcome no_failed_runs(const v1::Expectation& e, const v1::Scenario& s, const v1::Results& results) {
  std::vector<std::string> names;
  if (!e.variant().empty()) {
    names.push_back(e.variant());
  } else {
    if (s.runs().baseline()) names.push_back("baseline");
    for (const v1::Variant& v : s.runs().variants()) names.push_back(v.name());
  }
  uint32_t runs = 0, failed = 0;
  std::string first_failure;
  for (const std::string& name : names) {
    const v1::VariantResults* v = find_variant(results, name);
    if (v == nullptr) return error(no_results(name));
    runs += v->runs();
    failed += v->failed_runs();
    if (first_failure.empty() && v->failures_size() > 0) first_failure = fmt::format("{} {}", name, v->failures(0));
  }
  const std::string measured = fmt::format("{} of {} runs failed", failed, runs);
  if (runs == 0) return error("no run was made");
  if (failed == 0) return pass(measured);
  return fail(measured, first_failure.empty() ? measured : first_failure);
}

// One variant's ground truth of the fault against its parameters.
ExpectationOutcome fault_in_variant(const v1::Expectation& e, const v1::Fault& fault, const v1::VariantResults& v) {
  auto truth = std::find_if(v.faults().begin(), v.faults().end(),
                            [&](const v1::FaultTruth& t) { return t.name() == fault.name(); });
  if (truth == v.faults().end()) {
    return error(fmt::format("'{}' has no ground truth of fault '{}'", v.name(), fault.name()));
  }
  const uint64_t matched = truth->packets_matched();
  const uint64_t acted = truth->packets_acted();
  if (matched == 0) return fail(fmt::format("{}: 0 packets matched", v.name()), "the fault saw no packet");
  // A blackhole, or a probability of 1, leaves nothing to chance: every packet matched.
  if (fault.kind() == v1::Fault::KIND_BLACKHOLE || fault.probability() >= 1) {
    const std::string measured = fmt::format("{}: dropped {} of {} matched", v.name(), acted, matched);
    if (acted == matched) return pass(measured);
    return fail(measured, fmt::format("every packet matched should have been acted on; untouched: {}", matched - acted));
  }
  const double confidence = confidence_of(e);
  double low = 0, high = 0;
  try {
    const boost::math::binomial_distribution<double> draws(static_cast<double>(matched), fault.probability());
    // Discrete quantiles round outwards: the interval holds at least `confidence` of the draws.
    low = boost::math::quantile(draws, (1 - confidence) / 2);
    high = boost::math::quantile(boost::math::complement(draws, (1 - confidence) / 2));
  } catch (const std::exception& ex) {
    return error(fmt::format("no binomial interval for {} packets at {:g}: {}", matched, fault.probability(), ex.what()));
  }
  const std::string measured =
      fmt::format("{}: {} of {} matched ({:.3g}%); {:g}% interval at {:g}%: {:.0f}..{:.0f}", v.name(), acted,
                  matched, 100.0 * static_cast<double>(acted) / static_cast<double>(matched), confidence * 100,
                  fault.probability() * 100, low, high);
  const auto a = static_cast<double>(acted);
  if (a >= low && a <= high) return pass(measured);
  return fail(measured, fmt::format("{} packets acted on lie outside {:.0f}..{:.0f}", acted, low, high));
}

ExpectationOutcome fault_within_bound(const v1::Expectation& e, const v1::Scenario& s, const v1::Results& results) {
  auto fault = std::find_if(s.faults().begin(), s.faults().end(),
                            [&](const v1::Fault& f) { return f.name() == e.fault_within_bound(); });
  if (fault == s.faults().end()) return error(fmt::format("no fault named '{}'", e.fault_within_bound()));
  std::vector<ExpectationOutcome> each;
  for (const v1::Variant& variant : s.runs().variants()) {
    if (!e.variant().empty() && variant.name() != e.variant()) continue;
    if (std::find(variant.faults().begin(), variant.faults().end(), fault->name()) == variant.faults().end()) continue;
    const v1::VariantResults* v = find_variant(results, variant.name());
    each.push_back(v == nullptr ? error(no_results(variant.name())) : fault_in_variant(e, *fault, *v));
  }
  if (each.empty()) return error(fmt::format("no variant runs fault '{}'", fault->name()));
  // A failure anywhere is evidence against the expectation; an error leaves it undecided.
  ExpectationOutcome out = pass("");
  std::vector<std::string> measured, why;
  for (const ExpectationOutcome& o : each) {
    if (!o.measured.empty()) measured.push_back(o.measured);
    if (!o.message.empty()) why.push_back(o.message);
    if (o.verdict == Verdict::kFail) out.verdict = Verdict::kFail;
    if (o.verdict == Verdict::kError && out.verdict == Verdict::kPass) out.verdict = Verdict::kError;
  }
  out.measured = fmt::format("{}", fmt::join(measured, "; "));
  out.message = fmt::format("{}", fmt::join(why, "; "));
  return out;
}

ExpectationOutcome evaluate(const v1::Expectation& e, const v1::Scenario& s, const v1::Results& results) {
  switch (expectation_check(e)) {
    case ExpectationCheck::kSlowdownBelow: return slowdown_below(e, results);
    case ExpectationCheck::kNoFailedRuns: return no_failed_runs(e, s, results);
    case ExpectationCheck::kBusbwAtLeast: return busbw_at_least(e, s, results);
    case ExpectationCheck::kJctBelow: return jct_below(e, results);
    case ExpectationCheck::kP99Below: return p99_below(e, results);
    case ExpectationCheck::kFaultWithinBound: return fault_within_bound(e, s, results);
    case ExpectationCheck::kNone: break;
  }
  return error("names no single check");  // refused by the scenario check
}

std::string_view verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kFail: return "FAIL";
    case Verdict::kError: return "ERROR";
  }
  return "?";
}

}  // namespace

std::string describe_expectation(const v1::Expectation& e, const v1::Scenario& scenario) {
  const std::string& variant = e.variant();
  switch (expectation_check(e)) {
    case ExpectationCheck::kSlowdownBelow:
      return fmt::format("{}: slowdown < {:g}x ({})", variant, e.slowdown_below(), statistic_text(e));
    case ExpectationCheck::kNoFailedRuns:
      return fmt::format("{}: no failed runs", variant.empty() ? "every variant" : variant);
    case ExpectationCheck::kBusbwAtLeast: {
      const std::optional<double> rate = line_rate_gbps(e, scenario);
      return fmt::format("{}: busbw >= {:g}% of {} Gbit/s line rate{}", variant, e.busbw_at_least() * 100,
                         rate ? fmt::format("{:g}", *rate) : "?", filter_text(e));
    }
    case ExpectationCheck::kJctBelow:
      return fmt::format("{}: JCT < {} ({})", variant, duration_text(static_cast<double>(e.jct_below_ns()) / 1e9),
                         statistic_text(e));
    case ExpectationCheck::kP99Below:
      return fmt::format("{}: p99 collective time < {}{}", variant,
                         duration_text(static_cast<double>(e.p99_below_ns()) / 1e9), filter_text(e));
    case ExpectationCheck::kFaultWithinBound:
      return fmt::format("{}{}: packets acted on within the fault's {:g}% bound", e.fault_within_bound(),
                         variant.empty() ? "" : " in " + variant, confidence_of(e) * 100);
    case ExpectationCheck::kNone: break;
  }
  return "expectation";
}

std::vector<ExpectationOutcome> evaluate_expectations(const v1::Scenario& scenario, const v1::Results& results) {
  std::vector<ExpectationOutcome> out;
  for (const v1::Expectation& e : scenario.expect()) {
    ExpectationOutcome o = evaluate(e, scenario, results);
    o.name = e.name().empty() ? describe_expectation(e, scenario) : e.name();
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<ExpectationOutcome> unevaluated_expectations(const v1::Scenario& scenario, const std::string& why) {
  std::vector<ExpectationOutcome> out;
  for (const v1::Expectation& e : scenario.expect()) {
    ExpectationOutcome o = error("not evaluated: the run failed: " + why);
    o.name = e.name().empty() ? describe_expectation(e, scenario) : e.name();
    out.push_back(std::move(o));
  }
  return out;
}

bool all_hold(const std::vector<ExpectationOutcome>& outcomes) {
  return std::all_of(outcomes.begin(), outcomes.end(),
                     [](const ExpectationOutcome& o) { return o.verdict == Verdict::kPass; });
}

std::string expectations_summary(const std::vector<ExpectationOutcome>& outcomes) {
  if (outcomes.empty()) return "";
  const auto held = std::count_if(outcomes.begin(), outcomes.end(),
                                  [](const ExpectationOutcome& o) { return o.verdict == Verdict::kPass; });
  std::string out = fmt::format("\nexpectations: {} of {} hold\n", held, outcomes.size());
  for (const ExpectationOutcome& o : outcomes) {
    out += fmt::format("  {:<5}  {}", verdict_word(o.verdict), o.name);
    if (!o.measured.empty()) out += fmt::format("\n         measured: {}", o.measured);
    if (o.verdict != Verdict::kPass && !o.message.empty()) out += fmt::format("\n         {}", o.message);
    out += "\n";
  }
  return out;
}

}  // namespace collide::orchestrator::report
