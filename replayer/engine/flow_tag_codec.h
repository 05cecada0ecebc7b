#pragma once

#include <cstdint>

#include "common/result.h"
#include "replayer/collectives/step.h"

// Packs a transfer's FlowTag into the 64-bit RETH virtual address that travels with each message,
// so the receiving engine knows which of its receive steps a message completes. The channel is
// not packed: each channel has its own QPs. Layout: p2p (1) | op_seq (27) | step (18) | slice (18).
namespace collide::replayer::engine {

Result<uint64_t> pack_flow_tag(const collectives::FlowTag& tag);
collectives::FlowTag unpack_flow_tag(uint64_t packed, uint16_t channel);

}  // namespace collide::replayer::engine
