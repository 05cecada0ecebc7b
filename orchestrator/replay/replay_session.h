#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collide/agent.pb.h"
#include "collide/replay.pb.h"
#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/backend/packet_port.h"
#include "replayer/backend/pcap_capture_port.h"
#include "replayer/engine/engine.h"
#include "replayer/engine/host_engines.h"

// One host's replay, from a ReplayRequest to what it recorded. `collide replay` (by hand) and an
// agent's replay child both run it: prepare() opens everything (namespace, trace, one port per
// NIC, one engine per NIC) and the caller says when to go; run() plays the ranks to the end on
// the engines' threads, reporting progress and passing on a stop request meanwhile.
namespace collide::orchestrator::replay {

// What one NIC did: its engine's counters and what its port counted.
struct NicOutcome {
  uint32_t nic = 0;
  uint32_t queues = 1;  // its engines, one per queue of its port
  std::string port_description;
  replayer::engine::EngineCounters counters;
  std::vector<replayer::engine::EngineCounters> lanes;  // each queue's engine (with several)
  replayer::backend::PortCounters port_counters;
  std::string pcap_file;  // "" when not capturing
  uint64_t pcap_captured = 0;
  uint64_t pcap_not_captured = 0;
};

// Everything a run recorded, in the engines' own terms (the by-hand command writes all of it as
// JSON; an agent's child sends its summary, completion()).
struct SessionOutcome {
  Status status;                      // ok, or why the job failed (as NCCL would fail it)
  bool stopped = false;               // cut short by a stop request
  double wall_seconds = 0;
  std::vector<replayer::engine::OpRecord> records;
  replayer::engine::EngineCounters counters;  // summed over the NICs
  std::vector<replayer::engine::HookWindow> hook_windows;
  std::vector<NicOutcome> nics;  // rail order

  // What the NICs' ports say they are, in rail order, in one line.
  std::string ports_described() const;
};

struct RunCallbacks {
  // Called every ReplayRequest.progress_every_s (never when it is 0).
  std::function<void(const v1::RunProgress&)> on_progress;
  // Asked between slices (at least every 200 ms): true ends the run early.
  std::function<bool()> should_stop;
};

class ReplaySession {
 public:
  // Enters the request's namespace (the whole process moves), reads this host's ranks of the
  // trace, opens every NIC's port and builds the engines. Nothing is sent yet.
  static Result<std::unique_ptr<ReplaySession>> prepare(const v1::ReplayRequest& request);
  ~ReplaySession();
  ReplaySession(const ReplaySession&) = delete;
  ReplaySession& operator=(const ReplaySession&) = delete;

  v1::ReplayReady ready() const;
  const v1::ReplayRequest& request() const { return request_; }
  // Size of each communicator (ranks), for bandwidth figures of the records.
  uint32_t comm_size(const std::string& comm) const;

  // Plays the ranks to the end, to a failure, to the timeout or to a stop request; then answers
  // a peer's late retransmissions for a while (linger) before it returns. Call once.
  SessionOutcome run(const RunCallbacks& callbacks);

 private:
  ReplaySession() = default;

  struct Nic {
    std::unique_ptr<replayer::backend::PacketPort> port;
    replayer::backend::PcapCapturePort* capture = nullptr;  // inside port, when asked for
    std::string pcap_file;
  };

  v1::ReplayRequest request_;
  v1::TraceHeader header_;
  std::vector<Nic> nics_;  // rail order
  std::unique_ptr<replayer::engine::HostEngines> engines_;
  replayer::transport::Nanos linger_quiet_ns_ = 0;
};

// The summary an agent passes on: ops, counters, success. Fault counts are the agent's to add.
v1::RunCompletion completion_of(const SessionOutcome& outcome, uint32_t run_index);

// The counters so far, as a progress report.
v1::RunProgress progress_of(const replayer::engine::HostProgress& progress, uint32_t run_index,
                            double elapsed_s);

// Where NIC `nic` of `nics` captures: `file` itself for one NIC, else "<stem>.nic<n><ext>".
std::string pcap_file_of_nic(const std::string& file, uint32_t nic, size_t nics);

}  // namespace collide::orchestrator::replay
