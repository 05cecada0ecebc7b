#pragma once

#include <string>

#include "orchestrator/testbed/testbed_plan.h"

// A testbed's cabling as text, switch by switch from the top: each spine with the leaves below it,
// each leaf with its uplinks and its host NICs, and the line rate of each tier's ports. What
// `collide testbed show` and `up` print before the NIC table.
namespace collide::orchestrator::testbed {

std::string topology_text(const TestbedPlan& plan);

}  // namespace collide::orchestrator::testbed
