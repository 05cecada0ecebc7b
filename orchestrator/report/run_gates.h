#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "collide/results.pb.h"
#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/report/junit_xml.h"

// What `collide run` does with a scenario's expectations when the run is over: judge them against
// the results (or mark them all as errors when the run failed before it had any), print them, and
// write them as JUnit XML when asked.
namespace collide::orchestrator::report {

struct GateRun {
  std::string scenario_path;
  std::filesystem::path junit;  // empty: no JUnit file
  std::chrono::system_clock::time_point started;
};

struct GateVerdict {
  bool all_hold = true;  // every expectation passed (true without expectations)
  std::string summary;   // for the terminal; empty without expectations
  Status junit;          // whether the JUnit file (when asked for) was written
  JUnitSuite suite;      // what the JUnit file holds, also when none was asked for
};

// `results` is null when the run failed without results; `run_failure` says why the run failed
// (empty when it did not), and goes into the JUnit file's <system-err>.
GateVerdict judge_run(const v1::Scenario& scenario, const v1::Results* results,
                              const std::string& run_failure, const GateRun& run);

// A scenario that did not pass its check: a JUnit file with one case in error that says why, so
// that CI shows the reason instead of a missing or stale file.
Status write_junit_for_bad_scenario(const GateRun& run, const std::string& why);

// A sweep's own suite, after its points' suites: a case that every point ran cleanly (in error
// naming those that did not, or where the sweep was interrupted) and, for a flap-duration sweep,
// one that the survival limit found agrees with the transport's arithmetic.
struct SweepGates {
  std::string scenario_name;
  std::string point_failures;  // empty when every point ran cleanly
  size_t points_run = 0, points = 0;
  bool has_survival = false;
  bool survival_within_one_step = false;
  std::string survival_verdict;
};
JUnitSuite sweep_suite(const SweepGates& sweep, const GateRun& run);

}  // namespace collide::orchestrator::report
