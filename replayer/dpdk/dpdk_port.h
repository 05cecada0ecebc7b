#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collide/port.pb.h"
#include "common/result.h"
#include "replayer/wire/addresses.h"

struct rte_flow;
struct rte_mbuf;
struct rte_mempool;

namespace collide::replayer::dpdk {

struct PortStats {
  uint64_t rx_packets = 0;
  uint64_t tx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
  uint64_t rx_missed = 0;  // dropped by the device because the receive ring was full
  uint64_t rx_errors = 0;
  uint64_t tx_errors = 0;
};

// One DPDK Ethernet port with its receive and transmit queue pairs (DpdkPortConfig.queues, one by
// default) and its own buffer pools. Works on any PMD: a PCI NIC (allowlisted when the EAL
// started: eal_args_for), or a virtual device (net_af_xdp, net_af_packet, net_null, net_ring,
// ...), which it probes itself. The EAL must be initialised first (init_eal). With several queues,
// flow rules steer each RoCE QP to the queue of its lane by its UDP source port (lane_steering.h;
// DpdkPortConfig.queue_steering), and receive-side scaling spreads other frames over them where
// the device can hash them; each queue may be driven by its own thread (register_current_thread),
// one thread per queue.
class DpdkPort {
 public:
  // Opens, configures and starts the port. Its link may still be coming up (wait_for_link_up):
  // the two ends of a pair in one process (memif) come up only once both are open.
  static Result<std::unique_ptr<DpdkPort>> open(const v1::DpdkPortConfig& config);
  // DpdkPortConfig.link_up_timeout_ms, or its default.
  static std::chrono::milliseconds link_up_timeout(const v1::DpdkPortConfig& config);
  ~DpdkPort();
  DpdkPort(const DpdkPort&) = delete;
  DpdkPort& operator=(const DpdkPort&) = delete;

  uint16_t port_id() const { return port_id_; }
  const std::string& name() const { return name_; }
  const std::string& driver() const { return driver_; }
  wire::MacAddress mac() const { return mac_; }
  rte_mempool* mempool() const { return pool_; }
  rte_mempool* tx_mempool() const { return tx_pool_; }
  // Largest frame a buffer of this port's pool holds in one segment.
  uint32_t max_frame_size() const { return max_frame_size_; }
  uint16_t queue_count() const { return queues_; }
  // The NIC's own PFC as DpdkPortConfig.nic_pfc asked it and the driver answered (nic_pfc.h);
  // empty when not asked.
  const std::string& nic_pfc() const { return nic_pfc_; }

  // Polls the link until it is up; after `timeout`, an error that names the port and what its
  // link reports. A driver that cannot report its link counts as up.
  Status wait_for_link_up(std::chrono::milliseconds timeout) const;

  // Fills `mbufs` with `count` empty buffers from the port's transmit pool, all or none. Each
  // transmit buffer carries a payload memo: what its bytes hold, as the last encoder that wrote
  // it described them (0: unknown), so an encoder reusing it can skip rewriting identical
  // payload bytes. Allocation clears the memo (whoever writes the buffer next may not keep it
  // up to date); `previous_memos`, if given, receives what they were (always 0 where the
  // transmit pool is the receive pool: the device writes those buffers too).
  Status alloc_burst(rte_mbuf** mbufs, uint16_t count, uint64_t* previous_memos = nullptr);
  // Records what a transmit buffer's bytes hold once written; 0 for unknown. Inline, once per
  // frame: the field's offset is known once a port is open.
  static void set_payload_memo(rte_mbuf* mbuf, uint64_t memo) {
    std::memcpy(reinterpret_cast<unsigned char*>(mbuf) + payload_memo_offset_, &memo,
                sizeof(memo));
  }
  // Hands frames to the device on transmit queue `queue`; returns how many it took. The caller
  // still owns the rest.
  uint16_t tx_burst(rte_mbuf** mbufs, uint16_t count, uint16_t queue = 0);
  // Takes up to `capacity` frames received on queue `queue`; the caller frees them.
  uint16_t rx_burst(rte_mbuf** mbufs, uint16_t capacity, uint16_t queue = 0);

  Result<PortStats> stats() const;
  // One queue pair's share, as far as the driver counts per queue (rx_missed is the port's).
  Result<PortStats> queue_stats(uint16_t queue) const;

 private:
  DpdkPort() = default;

  // Where the memo sits in every mbuf (a dynamic field, registered when the first port opens).
  static inline int payload_memo_offset_ = 0;

  uint16_t port_id_ = 0;
  // Whether port_id_ names this port's device: open() may fail before it finds one, and port 0
  // then belongs to someone else.
  bool has_port_ = false;
  std::string name_;
  std::string driver_;
  wire::MacAddress mac_;
  rte_mempool* pool_ = nullptr;  // receive buffers: the device writes them
  // Transmit buffers, apart: only encoders write them, so their payload memos stay true. On
  // drivers that need the receive pool for transmitting without a copy, the same pool, and
  // memos are not kept (payload_memos_ false).
  rte_mempool* tx_pool_ = nullptr;
  bool payload_memos_ = false;
  uint32_t max_frame_size_ = 0;
  uint16_t queues_ = 1;
  std::string nic_pfc_;
  std::vector<rte_flow*> lane_flows_;  // steer QPs to their lane's queue (lane_steering.h)
  bool started_ = false;
  bool probed_here_ = false;
  bool pci_ = false;  // the bus it was probed on
};

}  // namespace collide::replayer::dpdk
