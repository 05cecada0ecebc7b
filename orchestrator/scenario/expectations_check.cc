#include "orchestrator/scenario/expectations_check.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace collide::orchestrator {
namespace {

constexpr ExpectationCheck kChecks[] = {
    ExpectationCheck::kSlowdownBelow, ExpectationCheck::kNoFailedRuns, ExpectationCheck::kBusbwAtLeast,
    ExpectationCheck::kJctBelow,      ExpectationCheck::kP99Below,     ExpectationCheck::kFaultWithinBound,
};

bool sets(const v1::Expectation& e, ExpectationCheck check) {
  switch (check) {
    case ExpectationCheck::kSlowdownBelow: return e.has_slowdown_below();
    case ExpectationCheck::kNoFailedRuns: return e.has_no_failed_runs();
    case ExpectationCheck::kBusbwAtLeast: return e.has_busbw_at_least();
    case ExpectationCheck::kJctBelow: return e.has_jct_below_ns();
    case ExpectationCheck::kP99Below: return e.has_p99_below_ns();
    case ExpectationCheck::kFaultWithinBound: return !e.fault_within_bound().empty();
    case ExpectationCheck::kNone: return false;
  }
  return false;
}

std::vector<ExpectationCheck> checks_set(const v1::Expectation& e) {
  std::vector<ExpectationCheck> out;
  for (ExpectationCheck c : kChecks) {
    if (sets(e, c)) out.push_back(c);
  }
  return out;
}

std::string all_check_names() {
  std::string out;
  for (ExpectationCheck c : kChecks) out += fmt::format("{}{}", out.empty() ? "" : ", ", check_field_name(c));
  return out;
}

// The kinds whose ground truth has a bound: independent draws with the fault's probability, or
// a blackhole that drops all it matches. Burst loss draws in correlated runs (no binomial bound);
// flaps, rate limits and the replayer's faults count no packets.
bool has_packet_bound(v1::Fault::Kind kind) {
  return kind == v1::Fault::KIND_LOSS || kind == v1::Fault::KIND_CORRUPT ||
         kind == v1::Fault::KIND_ECN_MARK || kind == v1::Fault::KIND_BLACKHOLE;
}

// "KIND_BURST_LOSS" -> "burst-loss", as the scenario writes it.
std::string kind_as_written(v1::Fault::Kind kind) {
  std::string name = v1::Fault::Kind_Name(kind);
  name = name.substr(name.find('_') + 1);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return c == '_' ? '-' : static_cast<char>(std::tolower(c)); });
  return name;
}

class ExpectationChecker {
 public:
  ExpectationChecker(const v1::Scenario& s, const FieldError& error) : s_(s), error_(error) {
    if (s.runs().baseline()) variants_.push_back("baseline");
    for (const v1::Variant& v : s.runs().variants()) variants_.push_back(v.name());
  }

  Status check(int index) const {
    const v1::Expectation& e = s_.expect(index);
    const std::string at = fmt::format("expect[{}]", index);
    const std::vector<ExpectationCheck> checks = checks_set(e);
    if (checks.empty()) {
      const std::string field = !e.name().empty() ? at + ".name" : !e.variant().empty() ? at + ".variant" : at;
      return error_(field, fmt::format("this expectation names no check: give one of {}", all_check_names()));
    }
    if (checks.size() > 1) {
      return error_(at + "." + std::string(check_field_name(checks[1])),
                    fmt::format("one check per expectation: this one also has {}; write another expectation",
                                check_field_name(checks[0])));
    }
    const ExpectationCheck check = checks[0];
    const std::string field = at + "." + std::string(check_field_name(check));
    COLLIDE_RETURN_IF_ERROR(check_variant(e, check, at));
    COLLIDE_RETURN_IF_ERROR(check_qualifiers(e, check, at));
    switch (check) {
      case ExpectationCheck::kSlowdownBelow:
        if (!s_.runs().baseline()) return error_(field, "a slowdown is against the baseline: set runs.baseline");
        if (e.variant() == "baseline") return error_(at + ".variant", "the baseline's slowdown is 1 by definition: name a variant");
        if (!(e.slowdown_below() > 0)) return error_(field, "must be a positive ratio (e.g. 1.5)");
        return check_interval(e, field);
      case ExpectationCheck::kNoFailedRuns:
        if (!e.no_failed_runs()) return error_(field, "write no_failed_runs: true (or leave it out)");
        return {};
      case ExpectationCheck::kBusbwAtLeast:
        if (!(e.busbw_at_least() > 0 && e.busbw_at_least() <= 1)) {
          return error_(field, "a share of line rate: within 0..1 or 0%..100% (e.g. 80%)");
        }
        if (e.line_rate_gbps() < 0) return error_(at + ".line_rate_gbps", "must be positive");
        if (!line_rate_gbps(e, s_)) {
          return error_(field, "no line rate is known: the testbed's host links are not shaped "
                               "(testbed.virtual.host_link_gbps); give line_rate_gbps");
        }
        return {};
      case ExpectationCheck::kJctBelow:
        if (e.jct_below_ns() == 0) return error_(field, "must be a positive duration (e.g. 2s)");
        return check_interval(e, field);
      case ExpectationCheck::kP99Below:
        if (e.p99_below_ns() == 0) return error_(field, "must be a positive duration (e.g. 150ms)");
        return {};
      case ExpectationCheck::kFaultWithinBound:
        return check_fault(e, at);
      case ExpectationCheck::kNone:
        break;
    }
    return {};
  }

 private:
  Status check_variant(const v1::Expectation& e, ExpectationCheck check, const std::string& at) const {
    if (e.variant().empty()) {
      if (check == ExpectationCheck::kNoFailedRuns || check == ExpectationCheck::kFaultWithinBound) return {};
      return error_(at + "." + std::string(check_field_name(check)),
                    fmt::format("needs a variant (one of: {})", fmt::join(variants_, ", ")));
    }
    if (std::find(variants_.begin(), variants_.end(), e.variant()) == variants_.end()) {
      return error_(at + ".variant", fmt::format("no variant '{}' runs in this scenario (runs: {})", e.variant(),
                                                 fmt::join(variants_, ", ")));
    }
    return {};
  }

  // Qualifiers only where they mean something: a stray one is a misunderstanding worth stopping.
  Status check_qualifiers(const v1::Expectation& e, ExpectationCheck check, const std::string& at) const {
    const bool timed = check == ExpectationCheck::kSlowdownBelow || check == ExpectationCheck::kJctBelow;
    const bool per_size = check == ExpectationCheck::kBusbwAtLeast || check == ExpectationCheck::kP99Below;
    if (e.has_of() && !timed) return error_(at + ".of", "only for slowdown_below and jct_below_ns");
    if (e.collective() != v1::OP_KIND_UNSPECIFIED && !per_size) {
      return error_(at + ".collective", "only for busbw_at_least and p99_below_ns");
    }
    if (e.bytes() != 0 && !per_size) return error_(at + ".bytes", "only for busbw_at_least and p99_below_ns");
    if (e.line_rate_gbps() != 0 && check != ExpectationCheck::kBusbwAtLeast) {
      return error_(at + ".line_rate_gbps", "only for busbw_at_least");
    }
    if (e.confidence() != 0 && check != ExpectationCheck::kFaultWithinBound) {
      return error_(at + ".confidence", "only for fault_within_bound");
    }
    return {};
  }

  // An interval needs two completed repetitions; one would make its upper end the mean in disguise.
  // A soak's count is known only when it ends (one that fits a single iteration reads as its mean).
  Status check_interval(const v1::Expectation& e, const std::string& field) const {
    if (statistic_of(e) == v1::Expectation::STATISTIC_UPPER && s_.runs().duration_ns() == 0 &&
        s_.runs().repetitions() < 2) {
      return error_(field, fmt::format("checks the upper end of a 95% interval over repetitions, which "
                                       "needs runs.repetitions of 2 or more (it is {}); or write of: mean",
                                       s_.runs().repetitions()));
    }
    return {};
  }

  Status check_fault(const v1::Expectation& e, const std::string& at) const {
    const std::string field = at + ".fault_within_bound";
    const auto& faults = s_.faults();
    auto fault = std::find_if(faults.begin(), faults.end(),
                              [&](const v1::Fault& f) { return f.name() == e.fault_within_bound(); });
    if (fault == faults.end()) return error_(field, fmt::format("no fault named '{}'", e.fault_within_bound()));
    if (!has_packet_bound(fault->kind())) {
      return error_(field, fmt::format("'{}' is a {} fault: only loss, corrupt, ecn-mark (binomial draws) and "
                                       "blackhole faults have a packet count to bound",
                                       fault->name(), kind_as_written(fault->kind())));
    }
    if (!(e.confidence() >= 0 && e.confidence() < 1)) {
      return error_(at + ".confidence", "within 0..1 (e.g. 99.9%)");
    }
    bool run = false;
    for (const v1::Variant& v : s_.runs().variants()) {
      if (!e.variant().empty() && v.name() != e.variant()) continue;
      run = run || std::find(v.faults().begin(), v.faults().end(), fault->name()) != v.faults().end();
    }
    if (!run) {
      return error_(e.variant().empty() ? field : at + ".variant",
                    e.variant().empty() ? fmt::format("no variant runs fault '{}'", fault->name())
                                        : fmt::format("variant '{}' does not run fault '{}'", e.variant(),
                                                      fault->name()));
    }
    return {};
  }

  const v1::Scenario& s_;
  const FieldError& error_;
  std::vector<std::string> variants_;  // the baseline (when run) and every variant
};

}  // namespace

ExpectationCheck expectation_check(const v1::Expectation& e) {
  const std::vector<ExpectationCheck> checks = checks_set(e);
  return checks.size() == 1 ? checks[0] : ExpectationCheck::kNone;
}

std::string_view check_field_name(ExpectationCheck check) {
  switch (check) {
    case ExpectationCheck::kSlowdownBelow: return "slowdown_below";
    case ExpectationCheck::kNoFailedRuns: return "no_failed_runs";
    case ExpectationCheck::kBusbwAtLeast: return "busbw_at_least";
    case ExpectationCheck::kJctBelow: return "jct_below_ns";
    case ExpectationCheck::kP99Below: return "p99_below_ns";
    case ExpectationCheck::kFaultWithinBound: return "fault_within_bound";
    case ExpectationCheck::kNone: break;
  }
  return "(no check)";
}

v1::Expectation::Statistic statistic_of(const v1::Expectation& e) {
  return e.has_of() ? e.of() : v1::Expectation::STATISTIC_UPPER;
}

double confidence_of(const v1::Expectation& e) {
  return e.confidence() > 0 ? e.confidence() : kDefaultFaultConfidence;
}

std::optional<double> line_rate_gbps(const v1::Expectation& e, const v1::Scenario& s) {
  if (e.line_rate_gbps() > 0) return e.line_rate_gbps();
  const v1::Testbed& t = s.testbed();
  if (t.agents_size() == 0 && t.virtual_().host_link_gbps() > 0) return t.virtual_().host_link_gbps();
  return std::nullopt;
}

Status check_expectations(const v1::Scenario& s, const FieldError& error) {
  const ExpectationChecker checker(s, error);
  for (int i = 0; i < s.expect_size(); ++i) COLLIDE_RETURN_IF_ERROR(checker.check(i));
  return {};
}

}  // namespace collide::orchestrator
