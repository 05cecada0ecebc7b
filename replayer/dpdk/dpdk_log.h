#pragma once

namespace collide::replayer::dpdk {

// Sends DPDK's log stream to the "dpdk" spdlog logger, one record per line, at the level DPDK gave
// the message. Safe to call more than once.
void route_dpdk_logs();

}  // namespace collide::replayer::dpdk
