#include "orchestrator/report/run_gates.h"

#include <ctime>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "orchestrator/report/expectations.h"
#include "orchestrator/report/junit_xml.h"

namespace collide::orchestrator::report {
namespace {

JUnitSuite suite_of(const std::string& name, const GateRun& run) {
  JUnitSuite suite;
  suite.name = name;
  const std::time_t started = std::chrono::system_clock::to_time_t(run.started);
  suite.timestamp = fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::gmtime(started));
  suite.seconds = std::chrono::duration<double>(std::chrono::system_clock::now() - run.started).count();
  suite.properties.emplace_back("scenario", run.scenario_path);
  return suite;
}

}  // namespace

GateVerdict judge_run(const v1::Scenario& scenario, const v1::Results* results,
                              const std::string& run_failure, const GateRun& run) {
  JUnitSuite suite = suite_of(scenario.name(), run);
  suite.cases = results != nullptr ? evaluate_expectations(scenario, *results)
                                   : unevaluated_expectations(scenario, run_failure);
  suite.system_err = run_failure;
  GateVerdict verdict{all_hold(suite.cases), expectations_summary(suite.cases), {}, suite};
  if (!run.junit.empty()) verdict.junit = write_file_atomically(run.junit, junit_xml(suite));
  return verdict;
}

Status write_junit_for_bad_scenario(const GateRun& run, const std::string& why) {
  if (run.junit.empty()) return {};
  JUnitSuite suite = suite_of(std::filesystem::path(run.scenario_path).stem().string(), run);
  suite.cases.push_back({"scenario check", Verdict::kError, "", why});
  return write_file_atomically(run.junit, junit_xml(suite));
}

JUnitSuite sweep_suite(const SweepGates& sweep, const GateRun& run) {
  JUnitSuite suite = suite_of(sweep.scenario_name + " (sweep)", run);
  suite.seconds = 0;  // the points' suites hold the time; the root's sum stays the sweep's
  const std::string ran = fmt::format("{} of {} points", sweep.points_run, sweep.points);
  if (sweep.point_failures.empty()) {
    suite.cases.push_back({"every point ran cleanly", Verdict::kPass, ran, ""});
  } else {
    std::string why = sweep.point_failures;
    while (!why.empty() && (why.front() == '\n' || why.front() == ' ')) why.erase(0, 1);
    suite.cases.push_back({"every point ran cleanly", Verdict::kError, ran, why});
  }
  if (sweep.has_survival) {
    suite.cases.push_back({"survival limit within one step of the arithmetic",
                           sweep.survival_within_one_step ? Verdict::kPass : Verdict::kFail, sweep.survival_verdict,
                           sweep.survival_within_one_step ? "" : sweep.survival_verdict});
  }
  return suite;
}

}  // namespace collide::orchestrator::report
