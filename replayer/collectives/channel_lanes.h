#pragma once

#include <cstdint>

#include "common/result.h"
#include "replayer/collectives/step.h"

namespace collide::replayer::collectives {

// The lane of a channel when a NIC's work is split over `lanes` engines, one per queue of the
// NIC: NCCL's channels are independent rings and trees (a step waits only for steps of its own
// channel), so each engine can run whole channels. Channel c's ring crosses between hosts from
// rail c % nics_per_host on (ring_order.h), so the channels one NIC carries are c, c + nics, ...:
// the lane is the channel's turn on its NIC, (c / nics_per_host) % lanes, so they spread over the
// lanes. Both ends of a QP compute the same (their placement is the job's).
constexpr uint32_t channel_turn(uint32_t channel, uint32_t nics_per_host) {
  return nics_per_host <= 1 ? channel : channel / nics_per_host;
}
constexpr uint32_t lane_of_channel(uint32_t channel, uint32_t nics_per_host, uint32_t lanes) {
  return lanes <= 1 ? 0 : channel_turn(channel, nics_per_host) % lanes;
}

// Keeps the steps of `op` whose channel falls in `lane` of `lanes` (lane_of_channel), renumbered densely with their
// dependencies. An error if a kept step waits for a step of another lane (an expansion that ties
// channels together could not be split).
Status keep_lane(ExpandedOp& op, uint32_t lane, uint32_t lanes, uint32_t nics_per_host);

}  // namespace collide::replayer::collectives
