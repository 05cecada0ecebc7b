#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "replayer/backend/packet_port.h"
#include "replayer/dpdk/dpdk_port.h"

namespace collide::replayer::backend {

// PacketPort over a DPDK port (any PMD). Frames are rte_mbufs. DPDK has no blocking receive on
// virtual devices, so an idle engine backs off with short sleeps that grow while nothing arrives
// and reset on traffic: busy polling would starve the other processes of a 2-core machine.
class DpdkBackendPort : public PacketPort {
 public:
  explicit DpdkBackendPort(std::unique_ptr<dpdk::DpdkPort> port);

  Status acquire(std::span<Frame> frames) override;
  uint16_t submit(std::span<Frame> frames) override;
  uint16_t receive(std::span<Frame> frames) override;
  void release(std::span<Frame> frames) override;
  void wait_for_frames(std::chrono::microseconds timeout) override;

  wire::MacAddress mac() const override { return port_->mac(); }
  uint32_t max_frame_size() const override { return port_->max_frame_size(); }
  PortCounters counters() const override;
  std::string describe() const override;

 private:
  std::unique_ptr<dpdk::DpdkPort> port_;
  std::chrono::microseconds idle_sleep_{1};
};

}  // namespace collide::replayer::backend
