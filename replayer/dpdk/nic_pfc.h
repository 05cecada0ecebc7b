#pragma once

#include <cstdint>
#include <string>

#include "collide/port.pb.h"

// The NIC's own priority flow control, through DPDK (rte_eth_dev_priority_flow_ctrl_set): pauses
// sent by the NIC when its receive buffer fills and honoured when its switch port sends them, for
// one priority. Whether a driver has it is known only by asking it.
namespace collide::replayer::dpdk {

// Asks the driver of started port `port_id` for `pfc`; returns, for the port's description, what
// was asked and what the driver said. A driver without it (ENOTSUP, ENOSYS) or that refuses the
// settings is not an error: the answer says so, and the replay's own pause frames still work.
std::string enable_nic_pfc(uint16_t port_id, const std::string& driver, const v1::DpdkPortConfig::NicPfc& pfc);

}  // namespace collide::replayer::dpdk
