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

// One NIC of a real host as a run uses it.
struct RealHostNic {
  std::string interface;  // the kernel's name for it
  std::string port;       // the packet port the replay opens on it
};

// Every rank's address, and per host its NICs in rail order: local rank i of a host runs on NIC
// i % nics_per_host (replayer/collectives/placement.h, Placement::uniform), with an address of
// that NIC's interface.
struct RealHostPlacement {
  std::vector<v1::RankEndpoint> endpoints;
  std::map<uint32_t, std::vector<RealHostNic>> nics_of_host;
  uint32_t nics_per_host = 0;
  uint32_t queues_per_nic = 1;  // engines per NIC (Testbed.queues_per_nic)
};

// Asks a real host's agent which of `interfaces` it may use and what they have.
Result<v1::HostDescription> describe_agent(AgentHandle& a, const std::vector<std::string>& interfaces);

// Places each real host's `per_host` ranks on the interfaces its agent described, taken in the
// order described (the scenario's `interfaces`: rail order), as many as there are ranks. Every
// rank needs an address of its own (the replayer tells ranks apart by address), so ranks that
// share an interface take its addresses in turn. Every host must use the same number of NICs
// (the placement is uniform). When the scenario named a host's interfaces, each one used must
// fit (an IPv4 address, an MTU that holds a frame); when it named none, those that do not fit
// are passed over. Errors name the host, the interface and what it lacks.
Result<RealHostPlacement> place_on_real_hosts(const v1::Scenario& s,
                                              const std::vector<AgentHandle>& agents,
                                              const std::map<uint32_t, v1::HostDescription>& described,
                                              uint32_t per_host);

}  // namespace collide::orchestrator
