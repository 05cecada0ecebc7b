#pragma once

#include <string>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"

// Which of a real host's NICs a fault on one of its links acts on: what the agent arms, and what
// the orchestrator checks before any run.
namespace collide::orchestrator::faults {

// The interface of a real host that a fault on one of its links acts on, among the host's NICs
// `interfaces` in rail order: `hN.nicK` is NIC K, `hN.<name>` the interface of that name, and a
// bare `hN` NIC 0, as on the virtual testbed. A NIC the host does not have is an error naming it.
Result<std::string> own_nic_of_fault(const v1::Fault& fault, const std::vector<std::string>& interfaces);

}  // namespace collide::orchestrator::faults
