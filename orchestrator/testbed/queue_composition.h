#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

// Where the bytes waiting in one egress queue came in. A switch doing PFC accounts its buffer by
// ingress port, but a qdisc knows only its own backlog; what it does know is that it is a FIFO, so
// the backlog is the newest `backlog` bytes enqueued. Given the running totals of bytes enqueued
// from each ingress (counted on the port's egress hook, orchestrator/testbed/port_feeds.h), taken
// at every look, the backlog's makeup is that of the bytes enqueued since the look at which the
// total was last `backlog` bytes behind - to within one look's arrivals. Pure.
namespace collide::orchestrator::testbed {

class QueueComposition {
 public:
  // `ingresses`: how many ingress slots the totals have; `history_bytes`: the deepest backlog to
  // explain (the queue's limit), beyond which older looks are forgotten.
  QueueComposition(size_t ingresses, uint64_t history_bytes);

  // The running totals of bytes enqueued from each ingress slot, now.
  void record(const std::vector<uint64_t>& enqueued_by_ingress);
  // Of the newest `backlog` bytes enqueued, how many came from each ingress slot.
  std::vector<uint64_t> held_by_ingress(uint64_t backlog) const;

 private:
  struct Look {
    uint64_t total = 0;
    std::vector<uint64_t> by_ingress;
  };
  // Looks at which something had arrived since the one before (oldest first); bounded.
  static constexpr size_t kMaxLooks = 4096;
  size_t ingresses_;
  uint64_t history_bytes_;
  std::deque<Look> looks_;
};

}  // namespace collide::orchestrator::testbed
