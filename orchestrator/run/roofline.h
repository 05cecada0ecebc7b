#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/report/run_result.h"
#include "orchestrator/testbed/testbed_plan.h"
#include "replayer/collectives/placement.h"

// The job's roofline on a virtual fabric: the least time its bytes need if every port sent at its
// line rate and the fabric spread each leaf's (and pod's) traffic over its uplinks perfectly. Every port must
// carry what the job's expansion puts through it, so the busiest port (or leaf uplink group) bounds
// the job from below; measured JCT over this is the JCT ratio fabric evaluations report (1 is a
// fabric that never made the job wait). Payload bytes only: headers, acknowledgements and resends
// are what the fabric and transport cost, which the ratio is there to show.
namespace collide::orchestrator {

// Payload bytes the job's network steps put through each place that can bound it.
struct FabricLoad {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> nic_sent;      // by (host, nic)
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> nic_received;  // by (host, nic)
  std::map<uint32_t, uint64_t> leaf_up;    // by leaf: sent to hosts under other leaves
  std::map<uint32_t, uint64_t> leaf_down;  // by leaf: received from hosts under other leaves
  std::map<uint32_t, uint64_t> pod_up;     // 3-tier, by pod: sent to hosts in other pods
  std::map<uint32_t, uint64_t> pod_down;   // 3-tier, by pod: received from hosts in other pods
};

// Where each host NIC is cabled: its leaf, by (host, nic), and each leaf's pod.
struct NicPlaces {
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> leaf;
  std::map<uint32_t, uint32_t> pod_of_leaf;
};
NicPlaces nic_places(const testbed::TestbedPlan& plan);

// Expands every op of the trace at `trace_path` as the replay would for `placement` and
// `transport`, and adds up where its network steps go.
Result<FabricLoad> fabric_load(const std::string& trace_path, const replayer::collectives::Placement& placement,
                               const v1::TransportSettings& transport, const NicPlaces& places);

// `load` at the line rates of `plan`'s ports. A port without a rate (an unshaped veth) bounds
// nothing; with none shaped the roofline is unknown (seconds 0).
report::Roofline roofline(const FabricLoad& load, const testbed::TestbedPlan& plan);

}  // namespace collide::orchestrator
