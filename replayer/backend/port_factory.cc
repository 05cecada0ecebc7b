#include "replayer/backend/port_factory.h"

#include <rte_mbuf.h>

#include <algorithm>

#include <fmt/format.h>

#include "replayer/backend/dpdk_backend.h"
#include "replayer/dpdk/eal.h"

namespace collide::replayer::backend {

Result<std::unique_ptr<PacketPort>> open_port(const std::string& spec, int lcore,
                                              uint32_t max_frame_bytes) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string target = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "dpdk" && !target.empty()) {
    COLLIDE_RETURN_IF_ERROR(dpdk::init_eal(dpdk::virtual_device_eal_args(lcore, 512)));
    v1::DpdkPortConfig config;
    config.set_device(target);
    config.set_rx_ring_size(4096);
    config.set_tx_ring_size(4096);
    config.set_mbuf_count(32767);
    config.set_mbuf_data_room(std::max<uint32_t>(max_frame_bytes, 2048) + RTE_PKTMBUF_HEADROOM);
    auto port = dpdk::DpdkPort::open(config);
    if (!port.ok()) return port.status();
    return std::unique_ptr<PacketPort>(new DpdkBackendPort(std::move(port).value()));
  }
  return invalid_argument(fmt::format(
      "port '{}': want dpdk:<device> (e.g. dpdk:net_af_xdp0,iface=eth0)", spec));
}

}  // namespace collide::replayer::backend
