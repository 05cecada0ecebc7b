#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.h"
#include "orchestrator/testbed/port_queue.h"
#include "orchestrator/testbed/qdisc_netlink.h"
#include "replayer/wire/pfc_frame.h"

struct mnl_socket;

// The kernel side of a virtual switch's PFC, for the ports of one switch namespace: holding and
// releasing a port's lossless queue (its pause gate, a tbf changed in place over netlink), reading
// every queue's counters, and receiving and sending MAC control frames.
namespace collide::orchestrator::testbed {

struct ReceivedPause {
  int ifindex = 0;  // the port it arrived at
  replayer::wire::PauseFrame frame;
  int64_t at_ns = 0;  // CLOCK_MONOTONIC, when it was read
};

class SwitchPortIo {
 public:
  // Netlink and packet sockets in the calling thread's current network namespace (enter it with
  // netns::Scope first; the sockets stay there afterwards).
  static Result<std::unique_ptr<SwitchPortIo>> open();
  ~SwitchPortIo();
  SwitchPortIo(const SwitchPortIo&) = delete;
  SwitchPortIo& operator=(const SwitchPortIo&) = delete;

  // Holds the frames behind `ifindex`'s pause gate: they stay queued up to the limit (beyond it
  // they are dropped as always) and at most gate.shape.max_frame_bytes leave after the call - one
  // frame. The queue and its frames are kept; a port's other queue goes on sending. Each call
  // refills tbf's bucket and so lets one more frame go: call it when a pause begins, not for every
  // frame that refreshes it.
  Status hold(int ifindex, const PauseGate& gate);
  // Gives the gate its shape back and sends again at once, also when nothing new arrives: a frame
  // of EtherType 0x88B5 that receivers drop goes through the port's qdisc to run it (wake_queue).
  Status release(int ifindex, const PauseGate& gate);
  // Every qdisc of the namespace with its counters, from one netlink dump.
  Result<std::vector<QdiscCounters>> qdisc_stats();
  // PFC and 802.3x PAUSE frames that arrived at any port since the last call; never blocks.
  Result<std::vector<ReceivedPause>> receive_pauses();
  // Readable when a pause frame waits (for the caller's poll/epoll).
  int pause_fd() const { return pause_rx_fd_; }
  // Sends `pause` as a PFC frame (from pause.source) out of `ifindex`, straight to the device: not
  // through the port's queue, which a hold or a full buffer must not make it wait behind (a
  // switch's MAC control frames bypass its queues).
  Status send_pfc(int ifindex, const replayer::wire::PauseFrame& pause);

 private:
  SwitchPortIo() = default;
  Status change_gate(int ifindex, const PauseGate& gate, const TbfShape& shape, const char* what);
  Status wake_queue(int ifindex);
  // One read of netlink into receive_buffer_, again when a signal cut it short; -1 and errno else.
  ssize_t receive_netlink();

  mnl_socket* netlink_ = nullptr;
  uint32_t netlink_port_ = 0;
  uint32_t seq_ = 0;
  int pause_rx_fd_ = -1;  // EtherType 0x8808 of every port
  int pfc_tx_fd_ = -1;    // PACKET_QDISC_BYPASS: straight to the device
  int wake_tx_fd_ = -1;   // through the port's qdisc
  std::vector<char> receive_buffer_;  // netlink replies and dumps
};

}  // namespace collide::orchestrator::testbed
