#pragma once

#include <cstdint>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/collectives/placement.h"

namespace collide::replayer::collectives {

// How a ring orders its ranks when the trace recorded no ring. Both keep the ranks of one host
// adjacent (by NIC from rail `channel` mod NICs on), so that only one step per host boundary
// crosses the network and the channels' crossings spread over the rails; they differ in the order
// of the hosts, which decides how many of those crossings climb to the spines.
enum class RingOrder {
  kRank,      // hosts in the order of their ranks, wherever they are cabled
  kTopology,  // hosts under one leaf adjacent, leaves in the order of their first host: one
              // crossing per leaf boundary (needs Placement::leaf_of_host)
};

// The global ranks of `comm` in the order data flows around ring `channel`: NCCL's own order
// when the trace recorded it, else `order`.
Result<std::vector<uint32_t>> ring_order(const v1::Communicator& comm, const Placement& placement,
                                         uint32_t channel, RingOrder order = RingOrder::kRank);

}  // namespace collide::replayer::collectives
