#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "orchestrator/report/run_result.h"
#include "orchestrator/testbed/testbed_plan.h"

// What every link of a virtual testbed carried during a run: the kernel's interface counters of
// both ends of each veth, read before and after the run, as deltas. The testbed's namespaces have
// IPv6 off and permanent neighbours towards the hosts, so what the counters count beyond the
// replay's own frames is a few ARP exchanges between leaves and spines.
namespace collide::orchestrator::testbed {

// Every interface's counters in every namespace of a testbed, by namespace and interface name.
using CounterSnapshot = std::map<std::string, std::map<std::string, report::LinkEndCounters>>;

// One namespace's interfaces, from `ip -s -j link show` (stats64 of each interface).
Result<std::map<std::string, report::LinkEndCounters>> parse_link_stats(const std::string& json);

// Reads every namespace of `plan` (one `ip -n <ns> -s -j link show` each).
Result<CounterSnapshot> read_counters(const TestbedPlan& plan);

// How reports name `link` and its ends (counters left zero); an empty name for a link whose
// namespaces the plan lacks.
report::FabricLink name_link(const TestbedPlan& plan, const PlannedLink& link);

// Every link of `plan` with what its ends counted between the two snapshots; an interface missing
// from either counts zero (a snapshot is never partial unless the testbed changed under it).
std::vector<report::FabricLink> link_traffic(const TestbedPlan& plan, const CounterSnapshot& before,
                                             const CounterSnapshot& after);

}  // namespace collide::orchestrator::testbed
