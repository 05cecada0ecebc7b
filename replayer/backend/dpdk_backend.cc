#include "replayer/backend/dpdk_backend.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <thread>

#include <fmt/format.h>

namespace collide::replayer::backend {
namespace {

constexpr uint16_t kMaxBurst = 64;
constexpr std::chrono::microseconds kMaxIdleSleep{200};

Frame frame_of(rte_mbuf* m) {
  return Frame{rte_pktmbuf_mtod(m, uint8_t*), m->data_len,
               static_cast<uint32_t>(rte_pktmbuf_tailroom(m) + m->data_len), m};
}

}  // namespace

DpdkBackendPort::DpdkBackendPort(std::unique_ptr<dpdk::DpdkPort> port) : port_(std::move(port)) {
  if (port_->queue_count() > 1) {
    for (uint16_t q = 0; q < port_->queue_count(); ++q) {
      views_.push_back(std::unique_ptr<DpdkBackendPort>(new DpdkBackendPort(port_, q)));
    }
  }
}

DpdkBackendPort::DpdkBackendPort(std::shared_ptr<dpdk::DpdkPort> port, uint16_t queue)
    : port_(std::move(port)), queue_(queue), is_view_(true) {}

PacketPort& DpdkBackendPort::queue(size_t index) {
  if (views_.empty()) return *this;
  return *views_.at(index);
}

Status DpdkBackendPort::acquire(std::span<Frame> frames) {
  std::array<rte_mbuf*, kMaxBurst> mbufs;
  std::array<uint64_t, kMaxBurst> memos;
  for (size_t done = 0; done < frames.size();) {
    const auto n = static_cast<uint16_t>(std::min<size_t>(kMaxBurst, frames.size() - done));
    if (Status s = port_->alloc_burst(mbufs.data(), n, memos.data()); !s.ok()) {
      release(frames.first(done));
      return s;
    }
    for (uint16_t i = 0; i < n; ++i) {
      frames[done + i] = frame_of(mbufs[i]);
      frames[done + i].payload_held = memos[i];
    }
    done += n;
  }
  return {};
}

uint16_t DpdkBackendPort::submit(std::span<Frame> frames) {
  std::array<rte_mbuf*, kMaxBurst> mbufs;
  uint16_t sent = 0;
  while (sent < frames.size()) {
    const auto n = static_cast<uint16_t>(std::min<size_t>(kMaxBurst, frames.size() - sent));
    for (uint16_t i = 0; i < n; ++i) {
      auto* m = static_cast<rte_mbuf*>(frames[sent + i].handle);
      m->data_len = static_cast<uint16_t>(frames[sent + i].len);
      m->pkt_len = frames[sent + i].len;
      dpdk::DpdkPort::set_payload_memo(m, frames[sent + i].payload_written);
      mbufs[i] = m;
    }
    const uint16_t taken = port_->tx_burst(mbufs.data(), n, queue_);
    sent += taken;
    if (taken < n) break;
  }
  return sent;
}

uint16_t DpdkBackendPort::receive(std::span<Frame> frames) {
  std::array<rte_mbuf*, kMaxBurst> mbufs;
  const auto want = static_cast<uint16_t>(std::min<size_t>(kMaxBurst, frames.size()));
  const uint16_t n = port_->rx_burst(mbufs.data(), want, queue_);
  for (uint16_t i = 0; i < n; ++i) {
    // Multi-segment frames are not used: the pool's buffers hold a whole frame.
    frames[i] = frame_of(mbufs[i]);
  }
  if (n > 0) idle_sleep_ = std::chrono::microseconds(1);
  return n;
}

void DpdkBackendPort::release(std::span<Frame> frames) {
  for (Frame& f : frames) {
    if (f.handle == nullptr) continue;
    auto* m = static_cast<rte_mbuf*>(f.handle);
    // Acquired and written but not sent: the bytes stay as the encoder left them. (Received
    // buffers belong to the receive pool, which never reads memos.)
    dpdk::DpdkPort::set_payload_memo(m, f.payload_written);
    rte_pktmbuf_free(m);
    f = {};
  }
}

void DpdkBackendPort::wait_for_frames(std::chrono::microseconds timeout) {
  std::this_thread::sleep_for(std::min(idle_sleep_, timeout));
  idle_sleep_ = std::min(kMaxIdleSleep, idle_sleep_ * 2);
}

PortCounters DpdkBackendPort::counters() const {
  PortCounters c;
  if (auto s = is_view_ ? port_->queue_stats(queue_) : port_->stats(); s.ok()) {
    c.tx_frames = s->tx_packets;
    c.tx_bytes = s->tx_bytes;
    c.rx_frames = s->rx_packets;
    c.rx_bytes = s->rx_bytes;
    c.rx_dropped = s->rx_missed;
    c.tx_errors = s->tx_errors;
  }
  return c;
}

std::string DpdkBackendPort::describe() const {
  if (is_view_) return fmt::format("dpdk {} ({}) queue {}", port_->name(), port_->driver(), queue_);
  if (!port_->nic_pfc().empty()) return fmt::format("dpdk {} ({}), {}", port_->name(), port_->driver(), port_->nic_pfc());
  return fmt::format("dpdk {} ({})", port_->name(), port_->driver());
}

}  // namespace collide::replayer::backend
