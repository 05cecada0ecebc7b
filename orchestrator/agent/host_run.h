#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collide/agent.pb.h"
#include "orchestrator/replay/replay_child.h"
#include "common/result.h"
#include "orchestrator/faults/armed_faults.h"

// One run on one host, as the agent drives it: the faults armed, the replay started and waiting
// for the go, then running until it exits. Destroying it kills the replay and disarms the faults.
namespace collide::orchestrator::agent {

struct HostRunDefaults {
  std::string netns;
  std::string port_spec;
  std::filesystem::path work_dir;
  std::string collide_binary;
  // This host's DPDK EAL arguments (a PCI allowlist, hugepage memory, ...): the host's own
  // business, so they come from the agent's configuration, not from the scenario.
  std::vector<std::string> eal_args;
  // The CPUs this host's NIC engines are pinned to, in rail order (NUMA-near ones, say): the
  // host's own business too. Empty: not pinned.
  std::vector<int> engine_cores;
};

// The run's NICs in rail order, completed with the agent's own settings: its port when the run
// names none, and its engine cores. A NIC left without a port, or cores that do not cover every
// NIC, are errors.
Result<std::vector<v1::RunNic>> nics_of_run(const v1::PrepareRun& request, const HostRunDefaults& defaults);

// What the replay child is asked to play: this host's ranks of the run, over its NICs (the names
// of the run's drain pauses and send delays it plays are added to `drain_pauses`, `send_delays`).
v1::ReplayRequest replay_request(
    const v1::PrepareRun& r, const HostRunDefaults& d, const std::string& trace_file,
    const std::vector<v1::RunNic>& nics,
    const std::vector<std::map<uint32_t, std::string>>& peer_macs_of_nic,
    std::vector<std::string>& drain_pauses, std::vector<std::string>& send_delays);

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
  // Lets the replay go.
  Status start();
  // True once the replay has exited (it closed its output).
  bool finished();
  double elapsed_s() const;
  // How far the replay got, from the newest progress it reported (ops done, packets, resends).
  v1::RunProgress poll_progress();
  // What the replay recorded (after finished()), with the faults' counters.
  v1::RunCompletion completion();
  // Kills the replay now; the completion says it was stopped and why.
  v1::RunCompletion stop(const std::string& reason);

 private:
  HostRun() = default;
  // The armed faults' counters and windows; a replayer fault's window as the replay measured it.
  void add_fault_counts(v1::RunCompletion& c) const;
  // Leaves the completion in the work directory (protobuf's JSON), every op's record kept for
  // whoever looks into a run afterwards; what goes to the orchestrator does not depend on it.
  void keep_record(const v1::RunCompletion& c) const;
  // Takes in what the child sent since the last call (progress, its completion, its end).
  void drain_events(std::chrono::milliseconds wait);

  v1::PrepareRun request_;
  std::unique_ptr<faults::ArmedFaults> faults_;
  std::optional<replay::ReplayChild> replay_;
  std::filesystem::path trace_file_, record_file_;
  bool started_ = false;
  bool exited_ = false;  // the child closed its end (after its completion, or dying)
  int exit_code_ = -1;
  v1::RunProgress progress_;
  std::optional<v1::RunCompletion> completion_;
  // The faults the replayer plays, by name, in the order of the request's drain pauses and
  // send delays: their measured windows come back by that order.
  std::vector<std::string> drain_pause_faults_, send_delay_faults_;
  std::chrono::steady_clock::time_point started_at_;
};

}  // namespace collide::orchestrator::agent
