#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "replayer/backend/packet_port.h"

namespace collide::replayer::backend {

// Opens a packet port from a spec:
//   dpdk:<device>      a DPDK port, e.g. dpdk:net_af_xdp0,iface=veth0 or dpdk:0000:3b:00.0
//   afpacket:<iface>   the kernel's AF_PACKET socket, for hosts without DPDK (also af_packet:)
// `lcore` is the CPU the DPDK EAL runs its main thread on; buffers hold frames of at least
// `max_frame_bytes` (2 KiB by default; 4 KiB RoCE MTUs need more). `eal_args` go to the DPDK EAL
// after the built-in ones (DpdkPortConfig.eal_args), e.g. "--vdev" or "--log-level".
Result<std::unique_ptr<PacketPort>> open_port(const std::string& spec, int lcore,
                                              uint32_t max_frame_bytes = 2048,
                                              const std::vector<std::string>& eal_args = {});

// Called first on each thread that will drive a port (an engine's thread): a DPDK port wants its
// callers to be threads DPDK knows (an lcore id, so buffer pools use their per-core caches);
// nothing to do for other ports or before DPDK is up.
Status prepare_port_thread();

// Whether this build has the DPDK backend.
bool dpdk_available();

}  // namespace collide::replayer::backend
