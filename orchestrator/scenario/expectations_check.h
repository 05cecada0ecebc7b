#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "collide/scenario.pb.h"
#include "common/result.h"

// A scenario's `expect:` list: what each expectation checks, the defaults of its qualifiers (in
// one place, for the check here and the evaluation after the run), and the checks made before
// anything runs, so that a gate that could never be evaluated is refused at its line.
namespace collide::orchestrator {

// What an expectation checks, from the one check field it sets.
enum class ExpectationCheck {
  kNone,  // no check field set (refused by check_expectations)
  kSlowdownBelow,
  kNoFailedRuns,
  kBusbwAtLeast,
  kJctBelow,
  kP99Below,
  kFaultWithinBound,
};

// The check an expectation names; kNone when it names none (or, for check_expectations, several).
ExpectationCheck expectation_check(const v1::Expectation& e);

// The field that names the check ("slowdown_below"), for messages.
std::string_view check_field_name(ExpectationCheck check);

// Slowdown and JCT: the upper end of the 95% interval unless `of: mean`.
v1::Expectation::Statistic statistic_of(const v1::Expectation& e);

// fault_within_bound: the confidence of the binomial interval (0 written or unset: 99.9%).
double confidence_of(const v1::Expectation& e);
inline constexpr double kDefaultFaultConfidence = 0.999;

// busbw_at_least: the line rate in Gbit/s, the expectation's own or the virtual testbed's shaped
// host links; nullopt when neither is known.
std::optional<double> line_rate_gbps(const v1::Expectation& e, const v1::Scenario& s);

// Builds the error for a field ("expect[2].variant") with the file and line of that field.
using FieldError = std::function<Status(const std::string& field, const std::string& what)>;

// Every expectation names one check, an existing variant and fault, thresholds in range, and what
// its check needs (a baseline for slowdowns, 2+ repetitions for an interval, a line rate for bus
// bandwidth, a fault whose ground truth has a bound).
Status check_expectations(const v1::Scenario& s, const FieldError& error);

}  // namespace collide::orchestrator
