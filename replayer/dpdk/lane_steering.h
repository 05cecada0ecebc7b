#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

struct rte_flow;

namespace collide::replayer::dpdk {

// What the flow rule of one queue matches: RoCEv2 (UDP destination port 4791) whose source port,
// under `source_mask`, equals `source_value` (engine/entropy_port.h: steered_port puts a QP's lane
// in those bits).
struct LaneRule {
  uint16_t queue = 0;
  uint16_t source_value = 0;
  uint16_t source_mask = 0;
};

// The rules of a port of `queues` queues, one per queue; an error unless `queues` is a power of
// two the source port's lane bits can address.
Result<std::vector<LaneRule>> lane_rules(uint32_t queues);

// Installs the rules on a started port. An error names the port, its driver and what the device
// refused, and installs nothing; rules made before the refusal are removed.
Result<std::vector<rte_flow*>> install_lane_rules(uint16_t port_id, const std::string& port_name,
                                                  const std::string& driver,
                                                  const std::vector<LaneRule>& rules);
void remove_lane_rules(uint16_t port_id, std::vector<rte_flow*>& flows);

}  // namespace collide::replayer::dpdk
