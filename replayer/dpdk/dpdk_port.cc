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
#include <thread>

#include <fmt/format.h>

#include "common/logging.h"
#include "replayer/dpdk/bpffs.h"
#include "replayer/dpdk/eal.h"
#include "replayer/dpdk/lane_steering.h"
#include "replayer/dpdk/nic_pfc.h"
#include "replayer/dpdk/port_defaults.h"

namespace collide::replayer::dpdk {
namespace {

constexpr std::string_view kAfXdpDriver = "net_af_xdp";
// What receive-side scaling hashes, of what the device offers: addresses and UDP ports, so QPs
// whose UDP source ports differ land on different queues.
constexpr uint64_t kRssHashes = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP;
constexpr std::chrono::milliseconds kLinkPollInterval{10};

uint32_t or_default(uint32_t value, uint32_t fallback) { return value != 0 ? value : fallback; }

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

// Transmit buffers: what the rings hold, per-lcore caches (a thread per queue and a few more)
// and bursts in flight, with room to spare; fewer than the receive pool, so the two fit the EAL
// memory the single pool did.
uint32_t tx_pool_size(uint32_t tx_ring, uint32_t queues, uint32_t cache, uint32_t rx_pool) {
  return std::min(rx_pool, 2 * tx_ring * queues + (queues + 3) * cache + 1023);
}

std::string link_text(const rte_eth_link& link) {
  if (link.link_status != RTE_ETH_LINK_UP) return "link down";
  return fmt::format("link up at {} Mb/s {}", link.link_speed,
                     link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX ? "full duplex" : "half duplex");
}

}  // namespace

Result<std::unique_ptr<DpdkPort>> DpdkPort::open(const v1::DpdkPortConfig& config) {
  if (!eal_initialized()) return failed_precondition("DPDK EAL is not initialised");
  if (config.device().empty()) return invalid_argument("DPDK port config names no device");
  auto device = parse_device(config.device());
  if (!device.ok()) return device.status();
  const uint32_t queues = or_default(config.queues(), kDefaultQueues);
  if (queues > kMaxQueues) {
    return invalid_argument(fmt::format("DPDK port '{}': {} queues, at most {}", config.device(),
                                        queues, kMaxQueues));
  }
  const bool flow_rules = queues > 1 && config.queue_steering() == v1::DpdkPortConfig::QUEUE_STEERING_FLOW_RULES;
  std::vector<LaneRule> rules;
  if (flow_rules) {
    auto made = lane_rules(queues);
    if (!made.ok()) return made.status().with_context(fmt::format("DPDK port '{}'", config.device()));
    rules = std::move(made).value();
  }
  auto log = logging::get("dpdk");
  std::unique_ptr<DpdkPort> port(new DpdkPort());
  port->name_ = device->name;
  port->queues_ = static_cast<uint16_t>(queues);

  if (port->name_.starts_with(kAfXdpDriver)) {
    auto mounted = ensure_bpffs();
    if (!mounted.ok()) {
      log->warn("{}; libxdp falls back to a single XDP program", mounted.status().message());
    } else if (*mounted) {
      log->info("mounted a BPF filesystem at /sys/fs/bpf for libxdp's dispatcher");
    }
  }
  uint16_t port_id = 0;
  if (rte_eth_dev_get_port_by_name(port->name_.c_str(), &port_id) != 0) {
    const int rc = rte_dev_probe(device->probe_string().c_str());
    if (rc < 0) return rte_status(rc, fmt::format("probing DPDK device '{}'", config.device()));
    port->probed_here_ = true;
    port->pci_ = device->pci;
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
  if (queues > info.max_rx_queues || queues > info.max_tx_queues) {
    return invalid_argument(fmt::format("DPDK port '{}' ({}): {} queues asked, the device has {} "
                                        "receive and {} transmit queues",
                                        port->name_, port->driver_, queues, info.max_rx_queues,
                                        info.max_tx_queues));
  }

  static std::atomic<int> pool_serial{0};
  const std::string pool_name = fmt::format("collide_p{}_{}", port_id, pool_serial++);
  const uint32_t data_room = or_default(config.mbuf_data_room(), RTE_MBUF_DEFAULT_BUF_SIZE);
  const uint32_t mbuf_count = or_default(config.mbuf_count(), kDefaultMbufCountPerQueue * queues);
  port->pool_ = rte_pktmbuf_pool_create(
      pool_name.c_str(), mbuf_count,
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
  if (queues > 1) {
    const uint64_t hashes = kRssHashes & info.flow_type_rss_offloads;
    if (hashes != 0) {
      conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
      conf.rx_adv_conf.rss_conf.rss_hf = hashes;  // the driver's own key
    } else {
      log->warn("port {} ({}) cannot hash frames over its {} receive queues: each queue receives "
                "what the device puts on it", port->name_, port->driver_, queues);
    }
  }
  if (int rc = rte_eth_dev_configure(port_id, static_cast<uint16_t>(queues),
                                     static_cast<uint16_t>(queues), &conf);
      rc != 0) {
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
        tx_pool_size(tx_ring, queues, cache, mbuf_count), cache,
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
  for (uint16_t q = 0; q < queues; ++q) {
    if (int rc = rte_eth_rx_queue_setup(port_id, q, rx_ring, socket, nullptr, port->pool_);
        rc != 0) {
      return rte_status(rc, fmt::format("setting up receive queue {} of '{}'", q, port->name_));
    }
    if (int rc = rte_eth_tx_queue_setup(port_id, q, tx_ring, socket, nullptr); rc != 0) {
      return rte_status(rc, fmt::format("setting up transmit queue {} of '{}'", q, port->name_));
    }
  }
  if (int rc = rte_eth_dev_start(port_id); rc != 0) {
    return rte_status(rc, fmt::format("starting '{}'", port->name_));
  }
  port->started_ = true;
  if (config.has_nic_pfc()) {
    port->nic_pfc_ = enable_nic_pfc(port_id, port->driver_, config.nic_pfc());
    log->info("port {}: {}", port->name_, port->nic_pfc_);
  }
  if (flow_rules) {
    auto installed = install_lane_rules(port_id, port->name_, port->driver_, rules);
    if (!installed.ok()) return installed.status();
    port->lane_flows_ = std::move(installed).value();
    log->info("port {} ({}): {} flow rules steer each QP to the queue of its lane", port->name_,
              port->driver_, port->lane_flows_.size());
  }
  if (config.promiscuous()) {
    if (int rc = rte_eth_promiscuous_enable(port_id); rc != 0) {
      log->warn("port {}: promiscuous mode not available ({})", port->name_, rte_strerror(-rc));
    }
  }
  rte_ether_addr addr{};
  if (rte_eth_macaddr_get(port_id, &addr) == 0) {
    std::copy(std::begin(addr.addr_bytes), std::end(addr.addr_bytes), port->mac_.bytes.begin());
  }
  log->info("port {} ({}) started: {} queue pair(s), rx ring {}, tx ring {}, mac {}", port->name_,
            port->driver_, queues, rx_ring, tx_ring, port->mac_.to_string());
  return port;
}

DpdkPort::~DpdkPort() {
  if (has_port_) {
    remove_lane_rules(port_id_, lane_flows_);
    if (started_) rte_eth_dev_stop(port_id_);
    rte_eth_dev_close(port_id_);
  }
  if (probed_here_) {
    // Removing a virtual device releases what its driver holds (sockets, XDP programs, rings).
    rte_eal_hotplug_remove(pci_ ? "pci" : "vdev", name_.c_str());
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

std::chrono::milliseconds DpdkPort::link_up_timeout(const v1::DpdkPortConfig& config) {
  return config.link_up_timeout_ms() != 0 ? std::chrono::milliseconds(config.link_up_timeout_ms())
                                          : kDefaultLinkUpTimeout;
}

Status DpdkPort::wait_for_link_up(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    rte_eth_link link{};
    const int rc = rte_eth_link_get_nowait(port_id_, &link);
    if (rc == -ENOTSUP) return {};
    if (rc != 0) return rte_status(rc, fmt::format("reading the link of '{}'", name_));
    if (link.link_status == RTE_ETH_LINK_UP) return {};
    if (std::chrono::steady_clock::now() >= deadline) {
      return deadline_exceeded(fmt::format(
          "DPDK port '{}' ({}, port {}): {} after waiting {} ms for it to come up (cable, "
          "switch port, or the peer's side down?)",
          name_, driver_, port_id_, link_text(link), timeout.count()));
    }
    std::this_thread::sleep_for(kLinkPollInterval);
  }
}

uint16_t DpdkPort::tx_burst(rte_mbuf** mbufs, uint16_t count, uint16_t queue) {
  return rte_eth_tx_burst(port_id_, queue, mbufs, count);
}

uint16_t DpdkPort::rx_burst(rte_mbuf** mbufs, uint16_t capacity, uint16_t queue) {
  return rte_eth_rx_burst(port_id_, queue, mbufs, capacity);
}

Result<PortStats> DpdkPort::stats() const {
  rte_eth_stats s{};
  if (int rc = rte_eth_stats_get(port_id_, &s); rc != 0) return rte_status(rc, "rte_eth_stats_get");
  return PortStats{s.ipackets, s.opackets, s.ibytes, s.obytes, s.imissed, s.ierrors, s.oerrors};
}

Result<PortStats> DpdkPort::queue_stats(uint16_t queue) const {
  if (queue >= queues_ || queue >= RTE_ETHDEV_QUEUE_STAT_CNTRS) {
    return invalid_argument(fmt::format("port '{}' has no counters of queue {}", name_, queue));
  }
  rte_eth_stats s{};
  if (int rc = rte_eth_stats_get(port_id_, &s); rc != 0) return rte_status(rc, "rte_eth_stats_get");
  return PortStats{s.q_ipackets[queue], s.q_opackets[queue], s.q_ibytes[queue],
                   s.q_obytes[queue],   s.imissed,           s.q_errors[queue], 0};
}

}  // namespace collide::replayer::dpdk
