#pragma once

#include <optional>
#include <string>

#include "collide/testbed.pb.h"
#include "orchestrator/testbed/port_queue.h"
#include "orchestrator/testbed/testbed_plan.h"

// The operator's own routes on a virtual fabric (VirtualTestbedSpec.routes): each replaces the
// route one switch has for one host's rank addresses with a route to a neighbouring switch, so
// traffic can be made to go down and up again (a misconfiguration, or a reroute around a failed
// link). Pure: checked and applied to the plan before anything exists.
namespace collide::orchestrator::testbed {

// Why a fabric balancing in `mode` cannot honour routes of one's own ("need ecmp: ..."), or
// nothing (ecmp): with qp-hash or spray the leaves' program chooses each frame's uplink itself.
std::optional<std::string> routes_conflict_with(v1::VirtualTestbedSpec::LoadBalancing mode);

// Applies `spec.routes()` to `plan` (made from `spec` without them), or says which field is wrong
// (relative to VirtualTestbedSpec: "routes[1].via"): a switch or host that does not exist, a `via`
// not cabled to `on`, a host routed twice on one switch, a fabric whose leaves choose uplinks
// themselves (qp-hash, spray: they would pass a leaf's route by).
std::optional<ProfileError> apply_switch_routes(const v1::VirtualTestbedSpec& spec, TestbedPlan& plan);

// The same check on a spec alone, for a scenario's check before anything is built.
std::optional<ProfileError> check_switch_routes(const v1::VirtualTestbedSpec& spec);

}  // namespace collide::orchestrator::testbed
