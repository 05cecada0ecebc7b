#pragma once

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "common/result.h"
#include "orchestrator/testbed/port_queue.h"

// The rtnetlink messages a switch port's queue is driven and read with, built and parsed without
// a socket (switch_port_io.h sends them): changing a port's pause gate (a tbf: port_queue.h's
// PauseGate) in place, and reading every qdisc's counters from a dump.
namespace collide::orchestrator::testbed {

// What a held port's shaper sends at: one byte a second. Once the frame its burst lets through has
// gone, the next one waits for minutes, so the queue holds until it is released.
inline constexpr uint64_t kHeldRateBytesPerSecond = 1;

// Room enough for any message built here.
inline constexpr size_t kQdiscMessageBufferSize = 512;

struct QdiscCounters {
  int ifindex = 0;
  uint32_t handle = 0;  // major << 16 | minor
  uint32_t parent = 0;  // TC_H_ROOT for a root qdisc
  std::string kind;     // "tbf", "htb", "pfifo", "noqueue", ...
  uint64_t bytes = 0, packets = 0, drops = 0, backlog_bytes = 0, qlen = 0;
};

// `shape` held: the trickle rate, and a burst of one largest frame. tbf refills its bucket on every
// change and drops at enqueue any frame longer than its burst, so the burst can be neither smaller
// (arriving frames would be dropped, not queued) nor larger (more would leave after the hold).
TbfShape held_shape(const TbfShape& shape);

// Writes into `buffer` (at least kQdiscMessageBufferSize bytes) an RTM_NEWQDISC that changes the
// tbf `gate` of `ifindex` to `shape` in place: no NLM_F_CREATE, so the kernel changes the existing
// qdisc (its child bfifo and the frames in it stay) or fails if there is none.
nlmsghdr* put_tbf_change(std::span<char> buffer, uint32_t seq, int ifindex, const PauseGate& gate,
                         const TbfShape& shape);

// Writes into `buffer` an RTM_GETQDISC dump request for every qdisc of the namespace.
nlmsghdr* put_qdisc_dump(std::span<char> buffer, uint32_t seq);

// Reads one RTM_NEWQDISC message of a dump: its counters, nullopt for an ingress/clsact qdisc
// (no queue), an error when the message is malformed.
Result<std::optional<QdiscCounters>> parse_qdisc(const nlmsghdr* message);

}  // namespace collide::orchestrator::testbed
