#include "replayer/dpdk/dpdk_port.h"

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string_view>

#include <fmt/format.h>

#include "common/logging.h"
#include "replayer/dpdk/eal.h"

namespace collide::replayer::dpdk {
namespace {

constexpr uint32_t kDefaultRingSize = 1024;
constexpr uint32_t kDefaultMbufCount = 8191;
constexpr uint32_t kDefaultMbufCache = 256;
constexpr std::string_view kAfXdpDriver = "net_af_xdp";

uint32_t or_default(uint32_t value, uint32_t fallback) { return value != 0 ? value : fallback; }

// "net_af_xdp0,iface=veth0" names the port "net_af_xdp0".
std::string device_name(const std::string& device) { return device.substr(0, device.find(',')); }

Status rte_status(int rc, std::string_view what) {
  return errno_status(rc < 0 ? -rc : rc, what);
}

// The payload memo lives in an mbuf dynamic field, registered once per process.
int payload_memo_offset() {
  static const int offset = [] {
    rte_mbuf_dynfield field{};
    std::snprintf(field.name, sizeof(field.name), "collide_payload_memo");
    field.size = sizeof(uint64_t);
    field.align = alignof(uint64_t);
    return rte_mbuf_dynfield_register(&field);
  }();
  return offset;
}

// Transmit buffers: what the ring holds, per-lcore caches and bursts in flight, with room to
// spare; fewer than the receive pool, so the two fit the EAL memory the single pool did.
uint32_t tx_pool_size(uint32_t tx_ring, uint32_t cache, uint32_t rx_pool) {
  return std::min(rx_pool, 2 * tx_ring + 4 * cache + 1023);
}

}  // namespace

Result<std::unique_ptr<DpdkPort>> DpdkPort::open(const v1::DpdkPortConfig& config) {
  if (!eal_initialized()) return failed_precondition("DPDK EAL is not initialised");
  if (config.device().empty()) return invalid_argument("DPDK port config names no device");
  auto log = logging::get("dpdk");
  std::unique_ptr<DpdkPort> port(new DpdkPort());
  port->name_ = device_name(config.device());

  uint16_t port_id = 0;
  if (rte_eth_dev_get_port_by_name(port->name_.c_str(), &port_id) != 0) {
    const int rc = rte_dev_probe(config.device().c_str());
    if (rc < 0) return rte_status(rc, fmt::format("probing DPDK device '{}'", config.device()));
    port->probed_here_ = true;
    if (rte_eth_dev_get_port_by_name(port->name_.c_str(), &port_id) != 0) {
      return not_found(fmt::format("DPDK device '{}' probed but has no Ethernet port",
                                   config.device()));
    }
  }
  port->port_id_ = port_id;
  port->has_port_ = true;

  rte_eth_dev_info info{};
  if (int rc = rte_eth_dev_info_get(port_id, &info); rc != 0) {
    return rte_status(rc, "rte_eth_dev_info_get");
  }
  port->driver_ = info.driver_name != nullptr ? info.driver_name : "";

  static std::atomic<int> pool_serial{0};
  const std::string pool_name = fmt::format("collide_p{}_{}", port_id, pool_serial++);
  const uint32_t data_room = or_default(config.mbuf_data_room(), RTE_MBUF_DEFAULT_BUF_SIZE);
  port->pool_ = rte_pktmbuf_pool_create(
      pool_name.c_str(), or_default(config.mbuf_count(), kDefaultMbufCount),
      or_default(config.mbuf_cache_size(), kDefaultMbufCache), 0,
      static_cast<uint16_t>(data_room), rte_eth_dev_socket_id(port_id));
  if (port->pool_ == nullptr) {
    return errno_status(rte_errno, fmt::format("creating buffer pool for '{}'", port->name_));
  }
  port->max_frame_size_ = data_room - RTE_PKTMBUF_HEADROOM;
  if (payload_memo_offset() < 0) {
    return errno_status(rte_errno, "registering the mbuf payload memo field");
  }
  payload_memo_offset_ = payload_memo_offset();

  rte_eth_conf conf{};
  if (int rc = rte_eth_dev_configure(port_id, 1, 1, &conf); rc != 0) {
    return rte_status(rc, fmt::format("configuring '{}'", port->name_));
  }
  uint16_t rx_ring = static_cast<uint16_t>(or_default(config.rx_ring_size(), kDefaultRingSize));
  uint16_t tx_ring = static_cast<uint16_t>(or_default(config.tx_ring_size(), kDefaultRingSize));
  if (int rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &rx_ring, &tx_ring); rc != 0) {
    return rte_status(rc, "adjusting descriptor counts");
  }
  const int socket = rte_eth_dev_socket_id(port_id);
  const uint32_t cache = or_default(config.mbuf_cache_size(), kDefaultMbufCache);
  if (port->driver_ == kAfXdpDriver) {
    // AF_XDP sends without a copy only buffers of the pool its UMEM is built from (the receive
    // pool); any other buffer is copied into one. Sharing the pool keeps that, and memos off:
    // the kernel writes received frames into the same buffers.
    port->tx_pool_ = port->pool_;
  } else {
    port->tx_pool_ = rte_pktmbuf_pool_create(
        (pool_name + "t").c_str(),
        tx_pool_size(tx_ring, cache, or_default(config.mbuf_count(), kDefaultMbufCount)), cache,
        0, static_cast<uint16_t>(data_room), socket);
    if (port->tx_pool_ == nullptr) {
      return errno_status(rte_errno, fmt::format("creating transmit pool for '{}'", port->name_));
    }
    port->payload_memos_ = true;
  }
  // Fresh buffers hold nothing known.
  rte_mempool_obj_iter(
      port->tx_pool_,
      [](rte_mempool*, void*, void* obj, unsigned) {
        set_payload_memo(static_cast<rte_mbuf*>(obj), 0);
      },
      nullptr);
  if (int rc = rte_eth_rx_queue_setup(port_id, 0, rx_ring, socket, nullptr, port->pool_); rc != 0) {
    return rte_status(rc, fmt::format("setting up receive queue of '{}'", port->name_));
  }
  if (int rc = rte_eth_tx_queue_setup(port_id, 0, tx_ring, socket, nullptr); rc != 0) {
    return rte_status(rc, fmt::format("setting up transmit queue of '{}'", port->name_));
  }
  if (int rc = rte_eth_dev_start(port_id); rc != 0) {
    return rte_status(rc, fmt::format("starting '{}'", port->name_));
  }
  port->started_ = true;
  if (config.promiscuous()) {
    if (int rc = rte_eth_promiscuous_enable(port_id); rc != 0) {
      log->warn("port {}: promiscuous mode not available ({})", port->name_, rte_strerror(-rc));
    }
  }
  rte_ether_addr addr{};
  if (rte_eth_macaddr_get(port_id, &addr) == 0) {
    std::copy(std::begin(addr.addr_bytes), std::end(addr.addr_bytes), port->mac_.bytes.begin());
  }
  log->info("port {} ({}) started: rx ring {}, tx ring {}, mac {}", port->name_, port->driver_,
            rx_ring, tx_ring, port->mac_.to_string());
  return port;
}

DpdkPort::~DpdkPort() {
  if (has_port_) {
    if (started_) rte_eth_dev_stop(port_id_);
    rte_eth_dev_close(port_id_);
  }
  if (probed_here_) {
    // Removing a virtual device releases what its driver holds (sockets, XDP programs, rings).
    rte_eal_hotplug_remove("vdev", name_.c_str());
  }
  if (pool_ != nullptr) rte_mempool_free(pool_);
  if (tx_pool_ != nullptr && tx_pool_ != pool_) rte_mempool_free(tx_pool_);
}

Status DpdkPort::alloc_burst(rte_mbuf** mbufs, uint16_t count, uint64_t* previous_memos) {
  if (rte_pktmbuf_alloc_bulk(tx_pool_, mbufs, count) != 0) {
    return unavailable(fmt::format("transmit pool of '{}' is empty", name_));
  }
  for (uint16_t i = 0; i < count; ++i) {
    uint64_t* memo = RTE_MBUF_DYNFIELD(mbufs[i], payload_memo_offset_, uint64_t*);
    if (previous_memos != nullptr) previous_memos[i] = payload_memos_ ? *memo : 0;
    *memo = 0;
  }
  return {};
}

uint16_t DpdkPort::tx_burst(rte_mbuf** mbufs, uint16_t count) {
  return rte_eth_tx_burst(port_id_, 0, mbufs, count);
}

uint16_t DpdkPort::rx_burst(rte_mbuf** mbufs, uint16_t capacity) {
  return rte_eth_rx_burst(port_id_, 0, mbufs, capacity);
}

Result<PortStats> DpdkPort::stats() const {
  rte_eth_stats s{};
  if (int rc = rte_eth_stats_get(port_id_, &s); rc != 0) return rte_status(rc, "rte_eth_stats_get");
  return PortStats{s.ipackets, s.opackets, s.ibytes, s.obytes, s.imissed, s.ierrors, s.oerrors};
}

}  // namespace collide::replayer::dpdk
