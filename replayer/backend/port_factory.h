#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "collide/port.pb.h"
#include "common/result.h"
#include "replayer/backend/packet_port.h"

namespace collide::replayer::backend {

// Opens a packet port from a spec:
//   dpdk:<device>      a DPDK port: a PCI NIC, e.g. dpdk:0000:3b:00.0 or, with the driver's
//                      arguments, dpdk:0000:3b:00.0,rxq_cqe_comp_en=0; or a virtual device, e.g.
//                      dpdk:net_af_xdp0,iface=veth0
//   afpacket:<iface>   the kernel's AF_PACKET socket, for hosts without DPDK (also af_packet:)
struct PortOptions {
  // The CPU the DPDK EAL runs its main thread on.
  int lcore = 0;
  // Buffers hold frames of at least this many bytes (4 KiB RoCE MTUs need more than 2 KiB).
  uint32_t max_frame_bytes = 2048;
  // Every DPDK port's settings (its `device` is ignored: the spec names it). Fields left at 0 get
  // a replay's ring and pool sizes (dpdk/port_defaults.h), the rest port.proto's defaults:
  // queues, link-up timeout, EAL memory and extra EAL arguments (eal_args).
  v1::DpdkPortConfig dpdk;
  // Where PCI devices' drivers are read from, before the EAL probes them.
  std::filesystem::path sysfs_root = "/sys";
};

// Opens all of a process's ports at once (one per NIC), in the order of `specs`. The DPDK EAL,
// which starts once per process, is started with every DPDK device at once: PCI devices are
// allowlisted together, and each is first checked to be bound to a driver DPDK can use (an error
// says how to bind it). Every port's link is up when this returns (waited for once all are open,
// so the two ends of a pair in one process come up together; options.dpdk.link_up_timeout_ms). Nothing is opened if any spec
// is bad; a later failure closes the ports opened before it.
Result<std::vector<std::unique_ptr<PacketPort>>> open_ports(const std::vector<std::string>& specs,
                                                            const PortOptions& options);

// One port: open_ports({spec}) with `eal_args` as options.dpdk.eal_args. A process that opens
// several ports must open them together (open_ports): the EAL starts only once.
Result<std::unique_ptr<PacketPort>> open_port(const std::string& spec, int lcore,
                                              uint32_t max_frame_bytes = 2048,
                                              const std::vector<std::string>& eal_args = {});

// Whether this build has the DPDK backend.
bool dpdk_available();

}  // namespace collide::replayer::backend
