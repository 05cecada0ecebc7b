#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collide/agent.pb.h"
#include "common/process.h"
#include "common/result.h"
#include "orchestrator/control/clock_offset.h"
#include "orchestrator/control/tls_channel.h"

// The agents of a run, as the orchestrator holds them: the control channel to each, its clock
// offset, and for agents of a virtual testbed the process the orchestrator started itself.
namespace collide::orchestrator {

struct AgentHandle {
  uint32_t index = 0;  // position in the fleet
  uint32_t host = 0;   // the host of the placement it runs
  std::string address; // "127.0.0.1:40123"
  std::unique_ptr<control::Channel> channel;
  std::optional<process::ChildProcess> process;  // set when this orchestrator started it
  control::ClockOffset clock;

  // "agent 1 (host 1, 127.0.0.1:40123)", for messages.
  std::string name() const;
  // Why the agent is gone, when its channel broke: what its process did, if we started it.
  std::string why_gone(const Status& channel_error);
};

struct LocalAgentSpec {
  uint32_t host = 0;
  std::string netns;  // the host's namespace
};

// Starts one `collide agent` per host on 127.0.0.1 (any free port), each bound to die with this
// process, and connects to it with the orchestrator's certificate.
Result<std::vector<AgentHandle>> start_local_agents(const std::string& collide_binary,
                                                    const std::vector<LocalAgentSpec>& hosts,
                                                    const std::filesystem::path& certs_dir,
                                                    const std::filesystem::path& work_dir);

// Connects to agents that run elsewhere ("host:port" each).
Result<std::vector<AgentHandle>> connect_agents(const std::vector<std::pair<uint32_t, std::string>>& agents,
                                                const std::filesystem::path& certs_dir);

// Estimates each agent's clock offset from `samples` probes (the shortest round trip wins).
Status measure_clocks(std::vector<AgentHandle>& agents, int samples);

// The orchestrator's clock, the one completion records are mapped onto.
uint64_t orchestrator_now_ns();

}  // namespace collide::orchestrator
