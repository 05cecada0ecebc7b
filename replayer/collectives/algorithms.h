#pragma once

#include <cstdint>
#include <vector>

#include "replayer/collectives/step_builder.h"

// The per-rank steps of each collective algorithm, for one channel. Every function appends to the
// builder the steps of the rank at `pos` in `order` (global ranks). Transfers are cut into slices;
// slice j of a step waits only for slice j of the step that brought its data, which is how NCCL
// pipelines a ring.
namespace collide::replayer::collectives {

struct ChannelView {
  const std::vector<uint32_t>& order;  // global ranks, ring or topology order
  uint32_t pos;                        // this rank's position in `order`
  uint64_t op_seq;
  uint16_t channel;
  bool point_to_point = false;

  uint32_t n() const { return static_cast<uint32_t>(order.size()); }
  uint32_t at(int64_t offset) const;  // rank `offset` positions after this one, modulo n
  FlowTag tag(uint32_t step) const { return FlowTag{point_to_point, op_seq, channel, step, 0}; }
};

// Ring all-reduce: n-1 reduce-scatter steps then n-1 all-gather steps; `bytes` is this channel's
// share of the buffer.
void ring_all_reduce(StepBuilder& b, const ChannelView& v, uint64_t bytes);
// Ring all-gather of `bytes_per_rank` (each rank's contribution on this channel).
void ring_all_gather(StepBuilder& b, const ChannelView& v, uint64_t bytes_per_rank);
// Ring reduce-scatter leaving `bytes_per_rank` reduced bytes at each rank.
void ring_reduce_scatter(StepBuilder& b, const ChannelView& v, uint64_t bytes_per_rank);
// Double-binary-tree all-reduce (tree `which`): reduce up to the root, broadcast back down. The
// tree spans the ranks of `order` directly (NCCL builds it over nodes with a chain inside each).
void tree_all_reduce(StepBuilder& b, const ChannelView& v, int which, uint64_t bytes);
// Pipelined chain from the root at `root_pos` around the ring (broadcast) or to it (reduce).
void chain_broadcast(StepBuilder& b, const ChannelView& v, uint32_t root_pos, uint64_t bytes);
void chain_reduce(StepBuilder& b, const ChannelView& v, uint32_t root_pos, uint64_t bytes);
// Direct transfers between the root and every other rank.
void direct_gather(StepBuilder& b, const ChannelView& v, uint32_t root_pos, uint64_t bytes_per_rank);
void direct_scatter(StepBuilder& b, const ChannelView& v, uint32_t root_pos,
                    uint64_t bytes_per_rank);
// Pairwise exchange: at step i each rank sends to the rank i after it and receives from the one i
// before it. Bytes are given per position; an empty `bytes_from_pos` means receive sizes are known
// only to the senders (all-to-allv), and each receive takes what arrives in one transfer.
void pairwise_all_to_all(StepBuilder& b, const ChannelView& v,
                         const std::vector<uint64_t>& bytes_to_pos,
                         const std::vector<uint64_t>& bytes_from_pos);
// One transfer to or from `peer` (global rank).
void point_to_point(StepBuilder& b, const ChannelView& v, StepKind kind, uint32_t peer,
                    uint64_t bytes);

}  // namespace collide::replayer::collectives
