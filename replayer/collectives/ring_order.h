#pragma once

#include <cstdint>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/collectives/placement.h"

namespace collide::replayer::collectives {

// The global ranks of `comm` in the order data flows around ring `channel`: NCCL's own order
// when the trace recorded it, else a topology-aware order (ranks of one host adjacent, by NIC
// from rail `channel` mod NICs on), so that only one step per host boundary crosses the network
// and the channels' crossings spread over the rails.
Result<std::vector<uint32_t>> ring_order(const v1::Communicator& comm, const Placement& placement,
                                         uint32_t channel);

}  // namespace collide::replayer::collectives
