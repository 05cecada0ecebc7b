#pragma once

#include <cstdint>

#include "common/result.h"
#include "replayer/collectives/step.h"

// Packs a transfer's FlowTag into the 64-bit RETH virtual address that travels with each message,
// so the receiving engine knows which of its receive steps a message completes. The channel is
// not packed: each channel has its own QPs. Nor is relay_to: it names NVLink hops to a PXN relay,
// which never reach the wire (the engine keys local transfers by it). Layout:
// p2p (1) | relay_from (8) | op_seq (25) | step (15) | slice (15).
namespace collide::replayer::engine {

Result<uint64_t> pack_flow_tag(const collectives::FlowTag& tag);
collectives::FlowTag unpack_flow_tag(uint64_t packed, uint16_t channel);

}  // namespace collide::replayer::engine
