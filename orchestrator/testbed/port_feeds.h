#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.h"
#include "orchestrator/testbed/port_queue.h"

// Which ingress ports fed each egress port of a switch (ebpf/port_feed.bpf.c): for PFC's ingress
// accounting, a switch must know how many of the bytes it holds came in on each port, and a
// port's qdisc knows only its own backlog. One program counts, on the egress of each given port,
// the bytes and frames handed to the port's lossless queue per ingress port; the counts are
// cumulative and read from memory the kernel shares with this process. Built without eBPF,
// attaching fails.
namespace collide::orchestrator::testbed {

// Interface indexes in a switch's namespace are small: its veths are created inside it, numbered
// from 2 (lo is 1). Ingress ports with an index of kMaxFeedIfindex or more are all counted in one
// overflow slot, read as ingress kMaxFeedIfindex (or any larger index); an egress port with such an
// index is refused by attach(), since its counts would mix with others'.
inline constexpr int kMaxFeedIfindex = 64;

class PortFeeds {
 public:
  // Attaches the counter to the egress of each device (by ifindex) of the calling thread's
  // current network namespace (the caller is inside it via common/netns.h's netns::Scope). Each
  // PortFeeds loads a program and counts of its own: one per switch.
  //
  // Other programs on the same hook (the ECN marker) still see every frame: the counter passes
  // each one on. Under TCX, programs run in the order they were attached, so attach the counter
  // after the marker: frames the marker drops early then never reach the count, as they never
  // reach the queue. (A clsact filter, the fallback on kernels without TCX, gets the priority the
  // kernel picks; the order there is not checked.)
  //
  // Only frames that `lossless` matches are counted: the ones the ports queue behind their pause
  // gate (PauseGate::tos; every frame on ports of one queue).
  static Result<std::unique_ptr<PortFeeds>> attach(const std::vector<int>& egress_ifindexes,
                                                   TosMatch lossless);
  ~PortFeeds();  // detaches
  PortFeeds(const PortFeeds&) = delete;
  PortFeeds& operator=(const PortFeeds&) = delete;

  // Bytes handed so far to the queue of `egress_ifindex` that entered the switch at
  // `ingress_ifindex` (0: sent by the switch itself); cumulative. A frame's bytes are its length
  // at tc egress: the Ethernet header and all that follows, without FCS (an IPv4 frame without
  // VLAN tag: the IP total length + 14), which is what the port's qdisc adds to its backlog.
  // Frames the queue then drops at its tail are counted too; frames `lossless` does not match are
  // not.
  // Reads shared memory, no system call. 0 for an egress port not attached or out of range.
  uint64_t bytes(int egress_ifindex, int ingress_ifindex) const {
    return read(egress_ifindex, ingress_ifindex, 0);
  }
  uint64_t frames(int egress_ifindex, int ingress_ifindex) const {
    return read(egress_ifindex, ingress_ifindex, 1);
  }

 private:
  struct Loaded;  // the program, its links and the mapping
  PortFeeds() = default;
  // `field`: 0 bytes, 1 frames.
  uint64_t read(int egress_ifindex, int ingress_ifindex, int field) const;

  std::unique_ptr<Loaded> loaded_;
  // The map's values as the program sees them, mapped read-only: per pair, bytes then frames.
  const uint64_t* counts_ = nullptr;
};

}  // namespace collide::orchestrator::testbed
