#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/report/run_result.h"

namespace collide::orchestrator {

namespace metrics {
class Registry;
}

struct LocalRunOptions {
  std::string collide_binary;         // started once per host as `collide agent`
  std::filesystem::path work_dir;     // certificates, traces, per-host results
  std::function<void(const std::string&)> progress;
  double run_timeout_s = 600;
  // Remote agents (testbed.agents): the directory with ca.pem, orchestrator.pem/.key. Agents of
  // a virtual testbed get certificates generated into work_dir/certs.
  std::filesystem::path certs_dir;
  // How long an agent keeps a run going without hearing from us.
  std::chrono::milliseconds lease{5000};
  // Where live metrics go as agents report (a Prometheus endpoint serves them); null: nowhere.
  metrics::Registry* metrics = nullptr;
  // Set (by a signal handler) to end the scenario early: the current run stops on every agent,
  // its faults are disarmed, and the testbed and agents are taken down as after a normal end.
  const std::atomic<bool>* interrupted = nullptr;
  // Called as each run (a variant, one repetition) ends, before the next starts, with its result
  // and its iteration (one repetition of the baseline and every variant; from 1): where results
  // are written as the scenario goes. A soak keeps the whole of them only in memory otherwise.
  std::function<void(const report::RunResult&, uint32_t iteration)> run_finished;
  // False: a run goes only to run_finished, and RunOutcome::runs stays empty (a soak's memory then
  // does not grow with its length).
  bool keep_runs = true;
};

// What a scenario produced. When an agent failed, the run it failed in is the last result
// (marked failed, with whatever the other agents had recorded), no further run was started, and
// `agent_failure` says which agent and why.
struct RunOutcome {
  std::vector<report::RunResult> runs;
  std::string agent_failure;
  // Set when the virtual testbed could not be removed afterwards (what is left and why).
  std::string teardown_failure;
};

// Runs a scenario through agents. For a virtual testbed (the embedded default) it builds the
// testbed, starts one `collide agent` per host on 127.0.0.1 with freshly generated certificates,
// and removes both afterwards; with `testbed.agents` it connects to those. For the baseline and
// each variant, each repetition (or, with runs.duration_ns, iteration after iteration until the
// duration is up), every agent gets its ranks, the trace, the transport and its
// faults, arms them under a lease, and all start together at one instant (clock offsets
// measured); completion records come back mapped onto this process's clock. A run whose job
// fails (as NCCL would) is a result, not an error; an error means the scenario could not be run.
Result<RunOutcome> run_locally(const v1::Scenario& scenario, const LocalRunOptions& options);

}  // namespace collide::orchestrator
