#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "replayer/backend/packet_port.h"

namespace collide::replayer::backend {

struct AfPacketConfig {
  std::string interface;
  uint32_t max_frame_bytes = 2048;  // largest frame a buffer holds
  uint32_t rx_ring_frames = 8192;   // slots of the receive ring (rounded up to fill its blocks)
  uint32_t tx_buffers = 4096;       // transmit buffers the port lends out
  bool qdisc_bypass = true;         // PACKET_QDISC_BYPASS: straight to the driver, as DPDK does
};

// PacketPort on the kernel's AF_PACKET socket, for hosts without DPDK.
//
// Receive: a memory-mapped TPACKET_V2 ring. Each slot carries its own status word, so a frame is
// visible the moment the kernel writes it; TPACKET_V3 hands frames over a block at a time and only
// retires a partly filled block after a timer of at least a millisecond, which would hold back the
// ACKs of a lightly loaded QP. Received frames point into the ring (no copy) and go back to the
// kernel on release.
// Transmit: frames are built in the port's own buffers and handed to the kernel in one
// sendmmsg() per burst (one system call per burst, the kernel copies each frame once).
class AfPacketPort : public PacketPort {
 public:
  static Result<std::unique_ptr<AfPacketPort>> open(const AfPacketConfig& config);
  ~AfPacketPort() override;
  AfPacketPort(const AfPacketPort&) = delete;
  AfPacketPort& operator=(const AfPacketPort&) = delete;

  Status acquire(std::span<Frame> frames) override;
  uint16_t submit(std::span<Frame> frames) override;
  uint16_t receive(std::span<Frame> frames) override;
  void release(std::span<Frame> frames) override;
  void wait_for_frames(std::chrono::microseconds timeout) override;

  wire::MacAddress mac() const override { return mac_; }
  uint32_t max_frame_size() const override { return buffer_size_; }
  PortCounters counters() const override;
  std::string describe() const override;

 private:
  AfPacketPort() = default;
  bool owns_rx_slot(const void* p) const;

  int fd_ = -1;
  std::string interface_;
  int ifindex_ = 0;
  wire::MacAddress mac_;
  // Receive ring.
  uint8_t* ring_ = nullptr;
  size_t ring_bytes_ = 0;
  uint32_t slot_size_ = 0;
  uint32_t slot_count_ = 0;
  uint32_t rx_next_ = 0;
  // Transmit buffers: one allocation, a free list of indices.
  uint32_t buffer_size_ = 0;
  std::vector<uint8_t> tx_memory_;
  std::vector<uint32_t> tx_free_;
  bool tx_blocked_ = false;  // the last submit found the socket's send buffer full
  PortCounters counters_;
  mutable uint64_t kernel_drops_ = 0;  // PACKET_STATISTICS resets on read: keep the sum
};

}  // namespace collide::replayer::backend
