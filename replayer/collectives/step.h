#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

// What one rank does on the wire for one operation: a set of steps (send or receive a number of
// bytes to or from one peer) with the steps each must wait for. A collective is a chain of such
// steps, so one slow link delays every step behind it, as on a real fabric.
namespace collide::replayer::collectives {

enum class StepKind : uint8_t { kSend, kRecv };

// Identifies one transfer so a sender's step and the receiver's step match: the same tag on both.
struct FlowTag {
  bool point_to_point = false;  // sends/recvs are numbered apart from collectives
  uint64_t op_seq = 0;   // which op: the n-th collective of the communicator, or the n-th
                         // send/recv between this pair of ranks in it
  uint16_t channel = 0;  // NCCL channel (each with its own ring/tree and connections)
  uint32_t step = 0;     // algorithm step
  uint32_t slice = 0;    // pipelined slice within the step
  // A transfer NCCL's PXN relays (ExpandOptions::pxn) crosses two hops, each with the tag of the
  // transfer it carries plus the far end that hop does not name, so it never meets the hop's
  // own transfers or other relays between the same two ranks:
  // the NVLink hop to the relay: 1 + the final receiver's global rank (never on the wire);
  uint32_t relay_to = 0;
  // the network hop from the relay: 1 + the origin's index among its host's ranks (on the wire).
  uint32_t relay_from = 0;
  bool operator==(const FlowTag&) const = default;
  auto operator<=>(const FlowTag&) const = default;
};

// A step waits for at most a few others (the previous slice of its chain, what it forwards), so
// its dependencies live inside the step: expanding millions of steps makes no allocation per step.
using StepDeps = boost::container::small_vector<uint32_t, 4>;

struct Step {
  uint32_t id = 0;  // index in ExpandedOp::steps
  StepKind kind = StepKind::kSend;
  uint32_t peer = 0;  // global rank
  uint64_t bytes = 0;
  FlowTag tag;
  uint16_t qp = 0;     // queue pair of the connection to `peer` on this channel
  bool local = false;  // peer on the same host: NVLink/PCIe, not the network
  uint64_t local_ns = 0;  // local steps: the modeled transfer time, instead of the network
  // A receive whose size only the sender knows (all-to-allv): `bytes` is 0 and the transfer
  // completes with whatever the matching send carries.
  bool size_from_sender = false;
  StepDeps deps;  // ids of this op's steps that must complete first
};

struct ExpandedOp {
  uint32_t rank = 0;
  uint64_t op_index = 0;
  std::string comm;
  std::vector<Step> steps;
};

}  // namespace collide::replayer::collectives
