#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "replayer/backend/packet_port.h"

struct pcap;
struct pcap_dumper;

namespace collide::replayer::backend {

// A PacketPort that records what another port sends and receives into a pcap file (Ethernet,
// nanosecond timestamps from the realtime clock), up to a number of packets: a run can be read
// back with tshark or Wireshark, which decode UDP port 4791 as RoCEv2 (InfiniBand).
// Sent frames are recorded when the port takes them, received frames when they arrive.
class PcapCapturePort : public PacketPort {
 public:
  static Result<std::unique_ptr<PcapCapturePort>> open(std::unique_ptr<PacketPort> inner,
                                                       const std::string& path,
                                                       uint64_t max_packets);
  ~PcapCapturePort() override;
  PcapCapturePort(const PcapCapturePort&) = delete;
  PcapCapturePort& operator=(const PcapCapturePort&) = delete;

  Status acquire(std::span<Frame> frames) override { return inner_->acquire(frames); }
  uint16_t submit(std::span<Frame> frames) override;
  uint16_t receive(std::span<Frame> frames) override;
  void release(std::span<Frame> frames) override { inner_->release(frames); }
  void wait_for_frames(std::chrono::microseconds timeout) override {
    inner_->wait_for_frames(timeout);
  }

  wire::MacAddress mac() const override { return inner_->mac(); }
  uint32_t max_frame_size() const override { return inner_->max_frame_size(); }
  PortCounters counters() const override { return inner_->counters(); }
  std::string describe() const override;

  uint64_t captured() const { return captured_; }
  uint64_t not_captured() const { return not_captured_; }  // past the limit
  // Writes buffered records to the file.
  void flush();

 private:
  PcapCapturePort() = default;
  void record(const uint8_t* data, uint32_t len, int64_t ns);

  std::unique_ptr<PacketPort> inner_;
  std::string path_;
  uint64_t max_packets_ = 0;
  uint64_t captured_ = 0;
  uint64_t not_captured_ = 0;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  std::vector<uint8_t> staging_;  // copies of frames being submitted: the port may free them
};

}  // namespace collide::replayer::backend
