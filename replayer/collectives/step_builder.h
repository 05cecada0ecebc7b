#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "replayer/collectives/placement.h"
#include "replayer/collectives/pxn_relays.h"
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

  // A builder of another rank's steps with the same slicing and QPs.
  StepBuilder for_op(ExpandedOp& other) const {
    return StepBuilder(other, placement_, slice_bytes_, qps_);
  }

  // A probe of another rank's expansion for the PXN relay: the builder keeps only that rank's
  // sends that `relay` carries on (algorithms ask keeps() before cutting a transfer into slices).
  void keep_only_relayed_by(uint32_t relay, const PxnRelays& relays) {
    relay_ = relay;
    relays_ = &relays;
  }
  bool keeps(StepKind kind, uint32_t peer) const {
    return relays_ == nullptr ||
           (kind == StepKind::kSend &&
            relays_->relay_of(placement_, out_.rank, peer) == static_cast<int64_t>(relay_));
  }

 private:
  ExpandedOp& out_;
  const Placement& placement_;
  uint64_t slice_bytes_;
  uint32_t qps_;
  uint32_t relay_ = 0;
  const PxnRelays* relays_ = nullptr;
};

}  // namespace collide::replayer::collectives
