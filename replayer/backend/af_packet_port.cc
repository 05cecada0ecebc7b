#include "replayer/backend/af_packet_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "common/logging.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

namespace collide::replayer::backend {
namespace {

constexpr size_t kMaxBurst = 64;
constexpr uint32_t kMinBlockBytes = 1u << 16;
constexpr int kSendBufferBytes = 8 << 20;

uint32_t round_up_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

tpacket2_hdr* slot_header(uint8_t* ring, uint32_t slot_size, uint32_t index) {
  return reinterpret_cast<tpacket2_hdr*>(ring + static_cast<size_t>(index) * slot_size);
}

uint32_t slot_status(const tpacket2_hdr* h) { return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE); }

void give_slot_back(tpacket2_hdr* h) { __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE); }

Status set_int_option(int fd, int level, int name, int value, std::string_view what) {
  if (setsockopt(fd, level, name, &value, sizeof value) != 0) return errno_status(errno, what);
  return {};
}

}  // namespace

Result<std::unique_ptr<AfPacketPort>> AfPacketPort::open(const AfPacketConfig& config) {
  const std::string where = "af_packet:" + config.interface;
  if (config.interface.empty() || config.interface.size() >= IFNAMSIZ) {
    return invalid_argument(fmt::format("{}: want an interface name", where));
  }
  if (config.max_frame_bytes < 64 || config.max_frame_bytes > 65536) {
    return invalid_argument(fmt::format("{}: frame size {} is out of range", where, config.max_frame_bytes));
  }
  std::unique_ptr<AfPacketPort> port(new AfPacketPort());
  port->interface_ = config.interface;
  port->ifindex_ = static_cast<int>(if_nametoindex(config.interface.c_str()));
  if (port->ifindex_ == 0) {
    return not_found(fmt::format("{}: no interface '{}' in this network namespace", where,
                                 config.interface));
  }
  // Protocol 0 until bound: nothing is queued before the ring exists.
  port->fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (port->fd_ < 0) return errno_status(errno, where + ": socket(AF_PACKET)");
  const int fd = port->fd_;

  ifreq ifr{};
  std::memcpy(ifr.ifr_name, config.interface.c_str(), config.interface.size());
  if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) return errno_status(errno, where + ": SIOCGIFHWADDR");
  std::array<uint8_t, 6> mac_bytes;
  std::memcpy(mac_bytes.data(), ifr.ifr_hwaddr.sa_data, 6);
  port->mac_ = wire::MacAddress{mac_bytes};
  if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 &&
      static_cast<uint32_t>(ifr.ifr_mtu) + ETH_HLEN < config.max_frame_bytes) {
    // Not an error: the engine's frames are usually smaller than the buffers it asks for.
    logging::get("replayer")->warn("{}: interface MTU {} is below the {} B frames asked for; "
                                   "larger frames will fail to send",
                                   where, ifr.ifr_mtu, config.max_frame_bytes);
  }

  COLLIDE_RETURN_IF_ERROR(set_int_option(fd, SOL_PACKET, PACKET_VERSION, TPACKET_V2, where + ": PACKET_VERSION"));
  // Slot: the kernel's header, alignment padding, then the frame.
  port->slot_size_ = std::max<uint32_t>(2048, round_up_pow2(config.max_frame_bytes + TPACKET2_HDRLEN + 32));
  const uint32_t block_size = std::max(kMinBlockBytes, port->slot_size_);
  const uint32_t per_block = block_size / port->slot_size_;
  const uint32_t blocks = std::max<uint32_t>(1, (config.rx_ring_frames + per_block - 1) / per_block);
  tpacket_req req{};
  req.tp_block_size = block_size;
  req.tp_block_nr = blocks;
  req.tp_frame_size = port->slot_size_;
  req.tp_frame_nr = blocks * per_block;
  if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0) {
    return errno_status(errno, where + ": PACKET_RX_RING");
  }
  port->slot_count_ = req.tp_frame_nr;
  port->ring_bytes_ = static_cast<size_t>(block_size) * blocks;
  void* ring = mmap(nullptr, port->ring_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (ring == MAP_FAILED) return errno_status(errno, where + ": mmap of the receive ring");
  port->ring_ = static_cast<uint8_t*>(ring);

  if (config.qdisc_bypass) {
    COLLIDE_RETURN_IF_ERROR(set_int_option(fd, SOL_PACKET, PACKET_QDISC_BYPASS, 1, where + ": PACKET_QDISC_BYPASS"));
  }
  // Our own frames would otherwise come back on the receive ring.
  COLLIDE_RETURN_IF_ERROR(set_int_option(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, where + ": PACKET_IGNORE_OUTGOING"));
  if (set_int_option(fd, SOL_SOCKET, SO_SNDBUFFORCE, kSendBufferBytes, "").ok() == false) {
    (void)set_int_option(fd, SOL_SOCKET, SO_SNDBUF, kSendBufferBytes, "");
  }

  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_ALL);
  addr.sll_ifindex = port->ifindex_;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return errno_status(errno, where + ": bind");
  }

  port->buffer_size_ = (config.max_frame_bytes + 63) & ~63u;
  port->tx_memory_.resize(static_cast<size_t>(port->buffer_size_) * config.tx_buffers);
  port->tx_free_.reserve(config.tx_buffers);
  for (uint32_t i = config.tx_buffers; i > 0; --i) port->tx_free_.push_back(i - 1);
  return port;
}

AfPacketPort::~AfPacketPort() {
  if (ring_ != nullptr) munmap(ring_, ring_bytes_);
  if (fd_ >= 0) close(fd_);
}

bool AfPacketPort::owns_rx_slot(const void* p) const {
  const auto* b = static_cast<const uint8_t*>(p);
  return b >= ring_ && b < ring_ + ring_bytes_;
}

Status AfPacketPort::acquire(std::span<Frame> frames) {
  if (tx_free_.size() < frames.size()) {
    return unavailable(fmt::format("af_packet:{}: out of transmit buffers", interface_));
  }
  for (Frame& f : frames) {
    const uint32_t index = tx_free_.back();
    tx_free_.pop_back();
    uint8_t* data = tx_memory_.data() + static_cast<size_t>(index) * buffer_size_;
    f = Frame{data, 0, buffer_size_, data};
  }
  return {};
}

uint16_t AfPacketPort::submit(std::span<Frame> frames) {
  std::array<mmsghdr, kMaxBurst> msgs;
  std::array<iovec, kMaxBurst> iov;
  size_t taken = 0;
  while (taken < frames.size()) {
    const size_t n = std::min(kMaxBurst, frames.size() - taken);
    for (size_t i = 0; i < n; ++i) {
      iov[i] = {frames[taken + i].data, frames[taken + i].len};
      msgs[i] = mmsghdr{};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int sent = sendmmsg(fd_, msgs.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
    if (sent > 0) {
      for (int i = 0; i < sent; ++i) {
        ++counters_.tx_frames;
        counters_.tx_bytes += frames[taken + i].len;
      }
      release(frames.subspan(taken, static_cast<size_t>(sent)));
      taken += static_cast<size_t>(sent);
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR) {
      tx_blocked_ = true;  // the kernel holds too many of our frames; retry after a wait
      break;
    }
    // The frame itself is refused (too large for the MTU, link gone): count it and let the
    // transport's recovery deal with it as with any loss, rather than retry it forever.
    if (counters_.tx_errors++ == 0) {
      logging::get("replayer")->error("af_packet:{}: sending a {} B frame: {}", interface_,
                                      frames[taken].len, std::strerror(errno));
    }
    release(frames.subspan(taken, 1));
    ++taken;
  }
  return static_cast<uint16_t>(taken);
}

uint16_t AfPacketPort::receive(std::span<Frame> frames) {
  uint16_t n = 0;
  while (n < frames.size()) {
    tpacket2_hdr* h = slot_header(ring_, slot_size_, rx_next_);
    if ((slot_status(h) & TP_STATUS_USER) == 0) break;
    rx_next_ = (rx_next_ + 1) % slot_count_;
    if (h->tp_snaplen < h->tp_len) {
      // Larger than a slot: never a frame of ours, and useless cut short.
      ++counters_.rx_dropped;
      give_slot_back(h);
      continue;
    }
    uint8_t* data = reinterpret_cast<uint8_t*>(h) + h->tp_mac;
    frames[n++] = Frame{data, h->tp_snaplen, h->tp_snaplen, h};
    ++counters_.rx_frames;
    counters_.rx_bytes += h->tp_snaplen;
  }
  return n;
}

void AfPacketPort::release(std::span<Frame> frames) {
  for (Frame& f : frames) {
    if (f.handle == nullptr) continue;
    if (owns_rx_slot(f.handle)) {
      give_slot_back(static_cast<tpacket2_hdr*>(f.handle));
    } else {
      const auto offset = static_cast<size_t>(static_cast<uint8_t*>(f.handle) - tx_memory_.data());
      tx_free_.push_back(static_cast<uint32_t>(offset / buffer_size_));
    }
    f = {};
  }
}

void AfPacketPort::wait_for_frames(std::chrono::microseconds timeout) {
  if (slot_status(slot_header(ring_, slot_size_, rx_next_)) & TP_STATUS_USER) return;
  pollfd p{fd_, static_cast<short>(POLLIN | (tx_blocked_ ? POLLOUT : 0)), 0};
  const auto us = std::max<int64_t>(0, timeout.count());
  const timespec ts{static_cast<time_t>(us / 1'000'000), static_cast<long>(us % 1'000'000) * 1000};
  (void)ppoll(&p, 1, &ts, nullptr);
  tx_blocked_ = false;
}

PortCounters AfPacketPort::counters() const {
  PortCounters c = counters_;
  tpacket_stats stats{};
  socklen_t len = sizeof stats;
  if (getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &stats, &len) == 0) kernel_drops_ += stats.tp_drops;
  c.rx_dropped += kernel_drops_;
  return c;
}

std::string AfPacketPort::describe() const {
  return fmt::format("af_packet {} (TPACKET_V2 receive ring of {} slots, sendmmsg transmit)",
                     interface_, slot_count_);
}

}  // namespace collide::replayer::backend
