#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/report/run_result.h"

// Bytes through a virtual fabric's switches, as their ports counted them: per leaf (and so per
// rail) what its host ports and its uplinks carried, per spine what its ports carried. The proof
// of where traffic went: with rails and PXN, a rank's inter-host bytes stay on its rail's leaf and
// the spines carry next to nothing.
namespace collide::orchestrator::report {

struct SwitchTraffic {
  std::string name;  // "leaf2", "spine0"
  bool leaf = false;
  uint32_t index = 0;
  uint32_t rail = 0;               // leaves: the NIC index of the hosts under it
  uint64_t bytes_from_below = 0;   // leaves: from their hosts; spines: from the leaves
  uint64_t bytes_to_below = 0;     // leaves: to their hosts; spines: to the leaves
  uint64_t bytes_from_above = 0;   // leaves: from the spines; spines: from the super-spines
  uint64_t bytes_to_above = 0;     // leaves: to the spines; spines: to the super-spines
  // Leaves: frames their host ports could not hand to a host because its receive ring was full.
  // The host lost them, not the fabric: its NIC engines and the kernel fell behind (too few cores
  // for the NICs), and the resends they caused are no fault's doing.
  uint64_t host_ring_drops = 0;
};

struct FabricTotals {
  std::vector<SwitchTraffic> leaves;  // by index
  std::vector<SwitchTraffic> spines;
  std::vector<SwitchTraffic> super_spines;  // 3-tier: their spines are "below"
  bool empty() const { return leaves.empty() && spines.empty(); }
  // Everything the spines received from the leaves: the bytes that crossed between leaves.
  uint64_t spine_bytes() const;
  // Everything the super-spines received: the bytes that crossed between pods.
  uint64_t super_spine_bytes() const;
  uint64_t host_ring_drops() const;
};

// The switches' totals over `links` (each counted at its switch-side end).
FabricTotals fabric_totals(const std::vector<FabricLink>& links);
// `more` added to `sum`, switch by switch (repetitions of one variant).
void add_fabric_totals(FabricTotals& sum, const FabricTotals& more);

}  // namespace collide::orchestrator::report
