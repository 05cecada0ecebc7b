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

// One host's replay, from a ReplayRequest to what it recorded. `collide replay` (by hand) and an
// agent's replay child both run it: prepare() opens everything (namespace, trace, port, engine)
// and the caller says when to go; run() plays the ranks to the end, reporting progress and
// looking for a stop request between slices.
namespace collide::orchestrator::replay {

// Everything a run recorded, in the engine's own terms (the by-hand command writes all of it as
// JSON; an agent's child sends its summary, completion()).
struct SessionOutcome {
  Status status;                      // ok, or why the job failed (as NCCL would fail it)
  bool stopped = false;               // cut short by a stop request
  double wall_seconds = 0;
  std::vector<replayer::engine::OpRecord> records;
  replayer::engine::EngineCounters counters;
  std::vector<replayer::engine::HookWindow> hook_windows;
  replayer::backend::PortCounters port_counters;
  std::string port_description;
  uint64_t pcap_captured = 0;
  uint64_t pcap_not_captured = 0;
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
  // trace, opens the port and builds the engine. Nothing is sent yet.
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

  v1::ReplayRequest request_;
  v1::TraceHeader header_;
  std::unique_ptr<replayer::backend::PacketPort> port_;
  replayer::backend::PcapCapturePort* capture_ = nullptr;  // inside port_, when asked for
  std::unique_ptr<replayer::engine::Engine> engine_;
  replayer::transport::Nanos linger_quiet_ns_ = 0;
};

// The summary an agent passes on: ops, counters, success. Fault counts are the agent's to add.
v1::RunCompletion completion_of(const SessionOutcome& outcome, uint32_t run_index);

// The counters so far, as a progress report.
v1::RunProgress progress_of(const replayer::engine::Engine& engine, uint32_t run_index,
                            double elapsed_s);

}  // namespace collide::orchestrator::replay
