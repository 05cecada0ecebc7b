#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "replayer/collectives/placement.h"
#include "replayer/collectives/step.h"

namespace collide::replayer::collectives {

// Splits `total` into `parts` near-equal shares (the first ones one byte larger), as NCCL splits a
// buffer across channels and ring chunks.
uint64_t share_of(uint64_t total, uint32_t parts, uint32_t index);

// Appends one rank's steps for an op: each transfer is cut into pipelined slices, slices spread
// over the connection's QPs, and steps to a peer on the same host are marked local.
class StepBuilder {
 public:
  StepBuilder(ExpandedOp& out, const Placement& placement, uint64_t slice_bytes,
              uint32_t qps_per_connection);

  // Slices of a transfer of `bytes` (at least one, so zero-byte transfers still synchronise).
  uint32_t slice_count(uint64_t bytes) const;
  uint64_t slice_bytes(uint64_t bytes, uint32_t slice) const;

  // Adds one slice of a transfer; returns its step id.
  uint32_t add(StepKind kind, uint32_t peer, uint64_t bytes, FlowTag tag,
               StepDeps deps = {});
  void mark_size_from_sender(uint32_t id) { out_.steps[id].size_from_sender = true; }

 private:
  ExpandedOp& out_;
  const Placement& placement_;
  uint64_t slice_bytes_;
  uint32_t qps_;
};

}  // namespace collide::replayer::collectives
