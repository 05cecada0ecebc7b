#include "orchestrator/testbed/switch_port_io.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace collide::orchestrator::testbed {
namespace {

namespace wire = replayer::wire;

// IEEE 802's local experimental EtherType: the frame that wakes a released queue (see
// wake_queue). Receivers have no handler for it and drop it; sent to the link-local group address
// of MAC control, which bridges never forward, so it goes no further than the peer.
constexpr uint16_t kEtherTypeLocalExperimental = 0x88B5;
constexpr size_t kWakeFrameSize = 60;
constexpr wire::MacAddress kWakeSource{{0x02, 0x00, 0x00, 0x00, 0x00, 0x00}};
// Pause frames waiting unread between two polls; each is 60 bytes, an skb costs ~1 KiB.
constexpr int kPauseReceiveBufferBytes = 1 << 20;
// The most the kernel puts into one read of a dump (32 KiB when the reader offers that much).
constexpr size_t kNetlinkReceiveBytes = 32 * 1024;

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

Result<int> packet_socket(uint16_t protocol, const char* what) {
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(protocol));
  if (fd < 0) return errno_status(errno, fmt::format("opening the packet socket {}", what));
  return fd;
}

// 0, or the errno of a send that failed. Frames go to the MAC control group address.
int send_frame(int fd, int ifindex, uint16_t protocol, std::span<const uint8_t> frame) {
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = ifindex;
  to.sll_protocol = htons(protocol);
  to.sll_halen = ETH_ALEN;
  std::memcpy(to.sll_addr, wire::kMacControlDestination.bytes.data(), ETH_ALEN);
  const ssize_t sent =
      sendto(fd, frame.data(), frame.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
  if (sent < 0) return errno;
  return static_cast<size_t>(sent) == frame.size() ? 0 : EMSGSIZE;
}

}  // namespace

Result<std::unique_ptr<SwitchPortIo>> SwitchPortIo::open() {
  std::unique_ptr<SwitchPortIo> io(new SwitchPortIo());
  io->netlink_ = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
  if (io->netlink_ == nullptr) return errno_status(errno, "opening the rtnetlink socket");
  if (mnl_socket_bind(io->netlink_, 0, MNL_SOCKET_AUTOPID) < 0) {
    return errno_status(errno, "binding the rtnetlink socket");
  }
  io->netlink_port_ = mnl_socket_get_portid(io->netlink_);
  io->receive_buffer_.resize(kNetlinkReceiveBytes);

  // Bound to no interface: pause frames of every port of the namespace, sll_ifindex tells which.
  auto rx = packet_socket(wire::kEtherTypeMacControl, "for pause frames");
  if (!rx.ok()) return rx.status();
  io->pause_rx_fd_ = *rx;
  if (setsockopt(io->pause_rx_fd_, SOL_SOCKET, SO_RCVBUF, &kPauseReceiveBufferBytes,
                 sizeof(kPauseReceiveBufferBytes)) < 0) {
    return errno_status(errno, "sizing the pause frames' receive buffer");
  }
  // Protocol 0: these two only send and are handed no frames.
  auto pfc_tx = packet_socket(0, "for PFC frames");
  if (!pfc_tx.ok()) return pfc_tx.status();
  io->pfc_tx_fd_ = *pfc_tx;
  const int bypass = 1;
  if (setsockopt(io->pfc_tx_fd_, SOL_PACKET, PACKET_QDISC_BYPASS, &bypass, sizeof(bypass)) < 0) {
    return errno_status(errno, "setting PACKET_QDISC_BYPASS on the PFC socket");
  }
  auto wake_tx = packet_socket(0, "for waking queues");
  if (!wake_tx.ok()) return wake_tx.status();
  io->wake_tx_fd_ = *wake_tx;
  return io;
}

SwitchPortIo::~SwitchPortIo() {
  if (netlink_ != nullptr) mnl_socket_close(netlink_);
  for (int fd : {pause_rx_fd_, pfc_tx_fd_, wake_tx_fd_}) {
    if (fd >= 0) close(fd);
  }
}

Status SwitchPortIo::change_gate(int ifindex, const PauseGate& gate, const TbfShape& shape, const char* what) {
  std::array<char, kQdiscMessageBufferSize> request{};
  const uint32_t seq = ++seq_;
  nlmsghdr* nlh = put_tbf_change(request, seq, ifindex, gate, shape);
  const auto context = fmt::format("{} the tbf {:x}: of ifindex {}", what, gate.handle >> 16, ifindex);
  if (mnl_socket_sendto(netlink_, nlh, nlh->nlmsg_len) < 0) return errno_status(errno, context);
  const ssize_t n = receive_netlink();
  if (n < 0) return errno_status(errno, context);
  // The acknowledgement: an error message with errno 0, or the kernel's refusal.
  if (mnl_cb_run(receive_buffer_.data(), static_cast<size_t>(n), seq, netlink_port_, nullptr, nullptr) < 0) {
    return errno_status(errno, context);
  }
  return {};
}

ssize_t SwitchPortIo::receive_netlink() {
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(netlink_, receive_buffer_.data(), receive_buffer_.size());
    if (n >= 0 || errno != EINTR) return n;
  }
}

Status SwitchPortIo::hold(int ifindex, const PauseGate& gate) {
  return change_gate(ifindex, gate, held_shape(gate.shape), "holding");
}

Status SwitchPortIo::release(int ifindex, const PauseGate& gate) {
  COLLIDE_RETURN_IF_ERROR(change_gate(ifindex, gate, gate.shape, "releasing"));
  return wake_queue(ifindex);
}

// Changing a tbf does not run its queue. While held, each try to send arms tbf's watchdog for when
// the trickle rate will have earned the next frame (minutes ahead), and tbf_change leaves that
// timer armed: after the change back to the full rate, the queue would stay stalled until a new
// frame arrives or the timer fires (measured: no held frame left within 2 s of the change; with
// this frame the first leaves within ~0.1 ms). Any frame enqueued on the port runs the queue at
// once, so one that every receiver ignores is sent through it. What it costs: it counts in the
// port's bytes and packets (on a port of one queue it leaves after the held frames, on a port of
// two it takes the other queue, being no IP); when its queue is full it is dropped and counted as
// a drop (the enqueue has run the port's qdisc all the same); and the peer's kernel, with no
// handler for it, counts it in the peer port's rx_dropped.
Status SwitchPortIo::wake_queue(int ifindex) {
  std::array<uint8_t, kWakeFrameSize> frame{};
  std::memcpy(frame.data(), wire::kMacControlDestination.bytes.data(), ETH_ALEN);
  std::memcpy(frame.data() + ETH_ALEN, kWakeSource.bytes.data(), ETH_ALEN);
  frame[12] = kEtherTypeLocalExperimental >> 8;
  frame[13] = kEtherTypeLocalExperimental & 0xff;
  const int err = send_frame(wake_tx_fd_, ifindex, kEtherTypeLocalExperimental, frame);
  // A full buffer refuses the frame (ENOBUFS) after the enqueue has run the queue: woken all the same.
  if (err != 0 && err != ENOBUFS) {
    return errno_status(err, fmt::format("waking the queue of ifindex {}", ifindex));
  }
  return {};
}

Result<std::vector<QdiscCounters>> SwitchPortIo::qdisc_stats() {
  std::array<char, kQdiscMessageBufferSize> request{};
  const uint32_t seq = ++seq_;
  nlmsghdr* nlh = put_qdisc_dump(request, seq);
  if (mnl_socket_sendto(netlink_, nlh, nlh->nlmsg_len) < 0) return errno_status(errno, "dumping qdiscs");

  struct Collected {
    std::vector<QdiscCounters> qdiscs;
    Status error;
  } collected;
  const auto keep = [](const nlmsghdr* message, void* data) -> int {
    auto* c = static_cast<Collected*>(data);
    auto parsed = parse_qdisc(message);
    // The rest of the dump is still read, so that no part of it is left for the next request.
    if (!parsed.ok()) {
      if (c->error.ok()) c->error = parsed.status();
      return MNL_CB_OK;
    }
    if (parsed->has_value()) c->qdiscs.push_back(std::move(**parsed));
    return MNL_CB_OK;
  };
  for (;;) {
    const ssize_t n = receive_netlink();
    if (n < 0) return errno_status(errno, "reading the qdisc dump");
    const int ret = mnl_cb_run(receive_buffer_.data(), static_cast<size_t>(n), seq, netlink_port_, keep, &collected);
    if (ret < 0) return errno_status(errno, "reading the qdisc dump");
    if (ret == MNL_CB_STOP) break;
  }
  if (!collected.error.ok()) return collected.error;
  return std::move(collected.qdiscs);
}

Result<std::vector<ReceivedPause>> SwitchPortIo::receive_pauses() {
  std::vector<ReceivedPause> pauses;
  std::array<uint8_t, 256> frame{};
  for (;;) {
    sockaddr_ll from{};
    socklen_t from_len = sizeof(from);
    const ssize_t n = recvfrom(pause_rx_fd_, frame.data(), frame.size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return errno_status(errno, "reading pause frames");
    }
    // Only arrivals are pauses for this switch, never a frame it sent itself.
    if (from.sll_pkttype == PACKET_OUTGOING) continue;
    auto pause = wire::decode_pause(std::span<const uint8_t>(frame.data(), static_cast<size_t>(n)));
    // MAC control of other opcodes (e.g. gate frames) asks nothing of a port.
    if (!pause.ok()) continue;
    pauses.push_back(ReceivedPause{from.sll_ifindex, *pause, monotonic_ns()});
  }
  return pauses;
}

Status SwitchPortIo::send_pfc(int ifindex, const wire::PauseFrame& pause) {
  std::array<uint8_t, wire::kMacControlFrameSize> frame{};
  auto size = wire::encode_pfc(pause, frame);
  if (!size.ok()) return size.status();
  const int err = send_frame(pfc_tx_fd_, ifindex, wire::kEtherTypeMacControl,
                             std::span<const uint8_t>(frame.data(), *size));
  if (err != 0) return errno_status(err, fmt::format("sending a PFC frame out of ifindex {}", ifindex));
  return {};
}

}  // namespace collide::orchestrator::testbed
