#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "collide/agent.pb.h"
#include "common/process.h"
#include "common/result.h"
#include "orchestrator/agent/host_faults.h"

// One run on one host, as the agent drives it: the faults armed, the replay started and waiting
// for the go, then running until it exits. Destroying it kills the replay and disarms the faults.
namespace collide::orchestrator::agent {

struct HostRunDefaults {
  std::string netns;
  std::string port_spec;
  std::filesystem::path work_dir;
  std::string collide_binary;
};

class HostRun {
 public:
  // Arms the faults and starts the replay, which opens its port and waits for start().
  static Result<std::unique_ptr<HostRun>> prepare(const v1::PrepareRun& request,
                                                  const HostRunDefaults& defaults);
  ~HostRun();
  HostRun(const HostRun&) = delete;
  HostRun& operator=(const HostRun&) = delete;

  uint32_t run_index() const { return request_.run_index(); }
  size_t armed_faults() const { return faults_ ? faults_->size() : 0; }
  bool started() const { return started_; }
  // Lets the replay go (it polls for the go file).
  Status start();
  // True once the replay has exited (it closed its output).
  bool finished();
  double elapsed_s() const;
  // How far the replay got, from the newest progress line it printed (ops done, packets, resends).
  v1::RunProgress poll_progress();
  // What the replay recorded (after finished()), with the faults' counters.
  v1::RunCompletion completion();
  // Kills the replay now; the completion says it was stopped and why.
  v1::RunCompletion stop(const std::string& reason);

 private:
  HostRun() = default;
  void add_fault_counts(v1::RunCompletion& c) const;

  v1::PrepareRun request_;
  std::unique_ptr<ArmedFaults> faults_;
  std::optional<process::ChildProcess> replay_;
  std::filesystem::path trace_file_, results_file_, go_file_;
  bool started_ = false;
  bool exited_ = false;
  int exit_code_ = -1;
  v1::RunProgress progress_;
  std::chrono::steady_clock::time_point started_at_;
};

}  // namespace collide::orchestrator::agent
