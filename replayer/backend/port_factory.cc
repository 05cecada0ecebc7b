#include "replayer/backend/port_factory.h"

#include <algorithm>

#include <fmt/format.h>

#include "replayer/backend/af_packet_port.h"

#ifdef COLLIDE_HAVE_DPDK
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "replayer/backend/dpdk_backend.h"
#include "replayer/dpdk/eal.h"
#endif

namespace collide::replayer::backend {
namespace {

#ifdef COLLIDE_HAVE_DPDK
constexpr int kEalMemoryMb = 1024;

Result<std::unique_ptr<PacketPort>> open_dpdk(const std::string& device, int lcore,
                                              uint32_t max_frame_bytes,
                                              const std::vector<std::string>& eal_args) {
  v1::DpdkPortConfig config;
  // The EAL starts once per process and every NIC's port takes its buffer pool from it: about
  // 75 MB of mbufs plus the AF_XDP PMD's own umem per NIC, so 8 NICs need about 1 GB.
  for (std::string& a : dpdk::virtual_device_eal_args(lcore, kEalMemoryMb)) config.add_eal_args(std::move(a));
  for (const std::string& a : eal_args) config.add_eal_args(a);
  COLLIDE_RETURN_IF_ERROR(dpdk::init_eal({config.eal_args().begin(), config.eal_args().end()}));
  config.set_device(device);
  config.set_rx_ring_size(4096);
  config.set_tx_ring_size(4096);
  config.set_mbuf_count(32767);
  config.set_mbuf_data_room(std::max<uint32_t>(max_frame_bytes, 2048) + RTE_PKTMBUF_HEADROOM);
  auto port = dpdk::DpdkPort::open(config);
  if (!port.ok()) return port.status();
  return std::unique_ptr<PacketPort>(new DpdkBackendPort(std::move(port).value()));
}
#endif

}  // namespace

Status prepare_port_thread() {
#ifdef COLLIDE_HAVE_DPDK
  if (dpdk::eal_initialized() && rte_lcore_id() == LCORE_ID_ANY && rte_thread_register() != 0) {
    return unavailable(fmt::format("registering an engine thread with DPDK: {}",
                                          rte_strerror(rte_errno)));
  }
#endif
  return {};
}

bool dpdk_available() {
#ifdef COLLIDE_HAVE_DPDK
  return true;
#else
  return false;
#endif
}

Result<std::unique_ptr<PacketPort>> open_port(const std::string& spec, int lcore,
                                              uint32_t max_frame_bytes,
                                              const std::vector<std::string>& eal_args) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string target = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if ((kind == "afpacket" || kind == "af_packet") && !target.empty()) {
    AfPacketConfig config;
    config.interface = target;
    config.max_frame_bytes = std::max<uint32_t>(max_frame_bytes, 64);
    auto port = AfPacketPort::open(config);
    if (!port.ok()) return port.status();
    return std::unique_ptr<PacketPort>(std::move(port).value());
  }
  if (kind == "dpdk" && !target.empty()) {
#ifdef COLLIDE_HAVE_DPDK
    return open_dpdk(target, lcore, max_frame_bytes, eal_args);
#else
    (void)lcore;
    (void)eal_args;
    return failed_precondition(fmt::format(
        "port '{}': this build is without DPDK (-DCOLLIDE_WITH_DPDK=OFF); use "
        "afpacket:<interface>", spec));
#endif
  }
  return invalid_argument(fmt::format(
      "port '{}': want dpdk:<device> (e.g. dpdk:net_af_xdp0,iface=eth0) or afpacket:<interface>",
      spec));
}

}  // namespace collide::replayer::backend
