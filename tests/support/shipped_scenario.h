#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/collide_run_dir.h"

namespace collide::testing {

// Runs a scenario from configs/ as shipped through `collide` (`collide_bin`), on the testbed of
// `run_dir` instead of the one it names (`shipped_bed`, the value of its testbed.virtual.name),
// with its results in `run_dir`. Returns report.json; an exit code other than `exit_code` (0: every
// run succeeded; 1: a run failed, as a scenario that shows a failure expects), or a report that
// does not parse, fails the test (with the run's output) and returns null. Prints how long the run
// took. `edits` change the scenario's text first (CollideRunDir::scenario_on_own_bed).
nlohmann::json run_shipped_scenario(const std::string& collide_bin, const std::filesystem::path& scenario,
                                    const std::string& shipped_bed, const CollideRunDir& run_dir,
                                    std::string* output = nullptr, const CollideRunDir::Edits& edits = {},
                                    int exit_code = 0);

// The variant of report.json with this name; none fails the test and gives a null.
const nlohmann::json& report_variant(const nlohmann::json& report, const std::string& name);

// A variant's switch port by its link and the switch it belongs to ("h0.nic0-leaf0", "leaf0"); none
// fails the test and gives a null.
const nlohmann::json& report_port(const nlohmann::json& variant, const std::string& link, const std::string& end);

// A variant's job (several jobs at once) by name; none fails the test and gives a null.
const nlohmann::json& report_job(const nlohmann::json& variant, const std::string& name);

// A variant's job's JCT in its first repetition, in seconds; 0 when there is none.
double report_job_jct(const nlohmann::json& variant, const std::string& name);

}  // namespace collide::testing
