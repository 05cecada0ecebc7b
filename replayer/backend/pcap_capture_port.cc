#include "replayer/backend/pcap_capture_port.h"

#include <pcap/pcap.h>
#include <time.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace collide::replayer::backend {
namespace {

constexpr int kSnapLength = 65535;

int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

Result<std::unique_ptr<PcapCapturePort>> PcapCapturePort::open(std::unique_ptr<PacketPort> inner,
                                                               const std::string& path,
                                                               uint64_t max_packets) {
  std::unique_ptr<PcapCapturePort> port(new PcapCapturePort());
  port->pcap_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLength,
                                                     PCAP_TSTAMP_PRECISION_NANO);
  if (port->pcap_ == nullptr) return internal_error("pcap: cannot create a capture handle");
  port->dumper_ = pcap_dump_open(port->pcap_, path.c_str());
  if (port->dumper_ == nullptr) {
    return unavailable(fmt::format("pcap file {}: {}", path, pcap_geterr(port->pcap_)));
  }
  port->inner_ = std::move(inner);
  port->path_ = path;
  port->max_packets_ = max_packets;
  return port;
}

PcapCapturePort::~PcapCapturePort() {
  if (dumper_ != nullptr) pcap_dump_close(dumper_);
  if (pcap_ != nullptr) pcap_close(pcap_);
}

void PcapCapturePort::record(const uint8_t* data, uint32_t len, int64_t ns) {
  if (captured_ >= max_packets_) {
    ++not_captured_;
    return;
  }
  pcap_pkthdr h{};
  h.ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  h.ts.tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000);  // nanoseconds: the file says so
  h.caplen = std::min<uint32_t>(len, kSnapLength);
  h.len = len;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, data);
  ++captured_;
}

uint16_t PcapCapturePort::submit(std::span<Frame> frames) {
  const uint64_t room = max_packets_ - std::min(max_packets_, captured_);
  if (room == 0) {
    const uint16_t taken = inner_->submit(frames);
    not_captured_ += taken;
    return taken;
  }
  // A port may free or reuse a frame's buffer as soon as it takes it: copy first.
  const size_t copies = std::min<size_t>(frames.size(), room);
  size_t bytes = 0;
  for (size_t i = 0; i < copies; ++i) bytes += frames[i].len;
  staging_.resize(bytes);
  size_t at = 0;
  for (size_t i = 0; i < copies; ++i) {
    std::memcpy(staging_.data() + at, frames[i].data, frames[i].len);
    at += frames[i].len;
  }
  std::vector<uint32_t> lengths(copies);
  for (size_t i = 0; i < copies; ++i) lengths[i] = frames[i].len;
  const int64_t ns = realtime_ns();
  const uint16_t taken = inner_->submit(frames);
  at = 0;
  for (size_t i = 0; i < taken; ++i) {
    if (i < copies) {
      record(staging_.data() + at, lengths[i], ns);
      at += lengths[i];
    } else {
      ++not_captured_;
    }
  }
  return taken;
}

uint16_t PcapCapturePort::receive(std::span<Frame> frames) {
  const uint16_t n = inner_->receive(frames);
  if (n == 0) return 0;
  const int64_t ns = realtime_ns();
  for (uint16_t i = 0; i < n; ++i) record(frames[i].data, frames[i].len, ns);
  return n;
}

void PcapCapturePort::flush() {
  if (dumper_ != nullptr) pcap_dump_flush(dumper_);
}

std::string PcapCapturePort::describe() const {
  return fmt::format("{}, captured to {}", inner_->describe(), path_);
}

}  // namespace collide::replayer::backend
