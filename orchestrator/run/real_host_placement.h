#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collide/agent.pb.h"
#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/run/agent_fleet.h"

// Where a run's ranks go on real hosts: what each agent says its host offers, and the rank map
// built from it.
namespace collide::orchestrator {

// Every rank's address, and per host the interface and packet port its ranks use.
struct RealHostPlacement {
  std::vector<v1::RankEndpoint> endpoints;
  std::map<uint32_t, std::string> interface_of_host;
  std::map<uint32_t, std::string> port_of_host;
};

// Asks a real host's agent which of `interfaces` it may use and what they have.
Result<v1::HostDescription> describe_agent(AgentHandle& a, const std::vector<std::string>& interfaces);

// Places each real host's ranks on the first of its agent's interfaces with an IPv4 address per
// rank, one address per rank (the replayer tells ranks apart by address).
Result<RealHostPlacement> place_on_real_hosts(const v1::Scenario& s,
                                              const std::vector<AgentHandle>& agents,
                                              const std::map<uint32_t, v1::HostDescription>& described,
                                              uint32_t per_host);

}  // namespace collide::orchestrator
