#pragma once

#include <cstddef>
#include <vector>

// A PFC deadlock as the fabric's switches can see it: a cycle of paused queues, each paused by its
// peer because that peer holds bytes that came in through it, waiting in the next paused queue of
// the cycle. No queue of the cycle can drain until another does, so none ever will; only a
// watchdog (or the flows' end) breaks it. A chain of pauses that ends at a slow receiver is
// back-pressure, not a deadlock: it drains as the receiver does.
namespace collide::orchestrator::testbed {

// One switch egress queue, as one look at the fabric found it.
struct PausedQueue {
  bool held = false;  // paused by its peer
  // The queues, by index, holding bytes that arrived through this queue's peer port (the bytes
  // its peer's pauses protect): this queue waits on them to drain.
  std::vector<size_t> waits_on;
};

// The queues of one cycle of held queues each waiting on the next, in order from the lowest
// index; empty when there is none.
std::vector<size_t> find_pause_cycle(const std::vector<PausedQueue>& queues);

}  // namespace collide::orchestrator::testbed
