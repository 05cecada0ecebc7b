#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "orchestrator/control/tls_channel.h"

// `collide agent`: one per host. It listens for the orchestrator on an authenticated control
// channel, and for each run receives its ranks' op streams, placement, transport settings and
// faults, arms the faults, starts the replay at the time it is told, reports progress and finally
// every op's start and end and the counters. Everything it starts lives under a lease: when the
// orchestrator disconnects or stays silent for a lease, the agent kills the replay and disarms.
namespace collide::orchestrator::agent {

struct AgentOptions {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 0;  // 0: any free port (printed on start)
  control::TlsFiles tls;
  std::string netns;      // the host's namespace, when a run does not name one
  std::string port_spec;  // the packet port, when a run does not name one
  std::filesystem::path work_dir;  // traces and results of the replays
  std::string collide_binary;      // runs `collide replay`
  std::vector<std::string> eal_args;  // DPDK EAL arguments for every replay on this host
  std::vector<int> engine_cores;      // CPUs of the NIC engines, in rail order; empty: not pinned
  int max_sessions = -1;           // orchestrators to serve before returning; -1: no limit
  // Real hosts: the only interfaces runs may use (empty: whichever the orchestrator names).
  std::vector<std::string> interfaces;
};

class AgentServer {
 public:
  static Result<std::unique_ptr<AgentServer>> create(AgentOptions options);
  uint16_t port() const { return listener_->port(); }
  // Serves one orchestrator at a time until `stop` is set or max_sessions have been served.
  // Peers without a valid certificate are refused and logged.
  Status serve(const std::atomic<bool>& stop);

 private:
  explicit AgentServer(AgentOptions options) : options_(std::move(options)) {}
  void session(control::Channel& channel, const std::atomic<bool>& stop);

  AgentOptions options_;
  std::unique_ptr<control::Listener> listener_;
};

// The monotonic clock every agent reports in (the replayer stamps ops with it).
uint64_t monotonic_ns();

}  // namespace collide::orchestrator::agent
