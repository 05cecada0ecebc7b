#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "injectors/xdp_record.h"
#include "replayer/backend/packet_port.h"
#include "replayer/dpdk/dpdk_port.h"

namespace collide::replayer::backend {

// PacketPort over a DPDK port (any PMD). Frames are rte_mbufs. DPDK has no blocking receive on
// virtual devices, so an idle engine backs off with short sleeps that grow while nothing arrives
// and reset on traffic: busy polling would starve the other processes of a 2-core machine.
// A port of several queues has a view per queue (queue(i)), each a DpdkBackendPort of its own
// that sends and receives on that queue and counts only its frames.
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
  size_t queue_count() const override { return port_->queue_count(); }
  const dpdk::DpdkPort& dpdk_port() const { return *port_; }
  // i < queue_count(); with one queue, the port itself.
  PacketPort& queue(size_t index) override;
  // Kept until the port has closed: the record of the XDP program AF_XDP attached.
  void keep_until_closed(std::unique_ptr<injectors::XdpRecord> record) {
    xdp_record_ = std::move(record);
  }

 private:
  // A view of queue `queue` of a port that another DpdkBackendPort owns too.
  DpdkBackendPort(std::shared_ptr<dpdk::DpdkPort> port, uint16_t queue);

  std::unique_ptr<injectors::XdpRecord> xdp_record_;  // declared first: it goes after the port
  std::shared_ptr<dpdk::DpdkPort> port_;
  uint16_t queue_ = 0;
  bool is_view_ = false;
  std::vector<std::unique_ptr<DpdkBackendPort>> views_;  // one per queue, if there are several
  std::chrono::microseconds idle_sleep_{1};
};

}  // namespace collide::replayer::backend
