#pragma once

#include <cstdint>
#include <vector>

#include "collide/agent.pb.h"
#include "orchestrator/testbed/testbed_plan.h"

// What a virtual host's agent is told about its NICs for a run: one entry per NIC in rail order,
// each a DPDK AF_XDP port on the host's interface and the MAC of the leaf port it is cabled to.
namespace collide::orchestrator::testbed {

// The NICs of `host` in `plan`, NIC 0 first. Every NIC's DPDK device gets a name of its own
// across the testbed (net_af_xdp<host * nics_per_host + nic>): one process may open several, and
// the EAL refuses a name twice.
std::vector<v1::RunNic> run_nics(const TestbedPlan& plan, uint32_t host);

}  // namespace collide::orchestrator::testbed
