#pragma once

#include <string>
#include <vector>

#include "collide/results.pb.h"
#include "collide/scenario.pb.h"

// A scenario's expectations (`expect:`) judged against a run's results: each passes, fails (the
// results show it does not hold) or is in error (the results cannot tell: its variant or fault
// never ran, or the run itself failed). Pure: the scenario and the results in, verdicts out.
namespace collide::orchestrator::report {

enum class Verdict { kPass, kFail, kError };

struct ExpectationOutcome {
  std::string name;      // the expectation's name, or what it checks
  Verdict verdict = Verdict::kError;
  std::string measured;  // the value the verdict rests on, with its unit; empty when none
  std::string message;   // why it failed or could not be judged; empty when it passed
};

// What an expectation checks, in words ("loss: slowdown < 2.5 (upper end of the 95% CI)"): its
// name when the scenario gives none.
std::string describe_expectation(const v1::Expectation& e, const v1::Scenario& scenario);

// Every expectation of the scenario, in order. The scenario has passed the scenario check.
std::vector<ExpectationOutcome> evaluate_expectations(const v1::Scenario& scenario,
                                                      const v1::Results& results);

// Every expectation in error because the run failed before it had results (`why`).
std::vector<ExpectationOutcome> unevaluated_expectations(const v1::Scenario& scenario,
                                                         const std::string& why);

bool all_hold(const std::vector<ExpectationOutcome>& outcomes);

// One line per expectation, "PASS", "FAIL" or "ERROR", its name, what was measured and why it
// failed, under a heading that counts them; empty without expectations.
std::string expectations_summary(const std::vector<ExpectationOutcome>& outcomes);

}  // namespace collide::orchestrator::report
