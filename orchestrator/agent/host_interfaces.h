#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collide/agent.pb.h"
#include "common/result.h"

// What a real host's agent offers: the interfaces it may use, with their IPv4 addresses, MAC and
// MTU, read from the kernel (getifaddrs and SIOCGIFMTU) in the calling thread's namespace.
namespace collide::orchestrator::agent {

// The interfaces the run may use: those `requested` by the orchestrator (all of `allowed` when it
// names none), each of which must be among `allowed` when the agent was given a list. An
// interface that does not exist, or is not allowed, is an error naming it.
Result<v1::HostDescription> describe_host(const std::vector<std::string>& allowed,
                                          const std::vector<std::string>& requested);

}  // namespace collide::orchestrator::agent
