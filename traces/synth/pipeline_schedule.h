#pragma once

#include <cstdint>
#include <vector>

// The order in which one pipeline stage runs its micro-batches and talks to its neighbours in
// Megatron-LM's non-interleaved 1F1B schedule (forward_backward_pipelining_without_interleaving):
// stage s of P runs min(P - s - 1, M) warm-up forward passes, then alternates one forward and one
// backward, then drains the remaining backward passes. Sends and receives that Megatron issues
// together (send_forward_recv_backward, send_backward_recv_forward) share a group number, as one
// NCCL group does. The first stage neither receives activations nor sends gradients; the last
// stage neither sends activations nor receives gradients.
namespace collide::traces::synth {

enum class PipeAction : uint8_t {
  kForward,       // forward pass of a micro-batch
  kBackward,      // backward pass of a micro-batch
  kSendForward,   // activations of the micro-batch to the next stage
  kRecvForward,   // activations of the micro-batch from the previous stage
  kSendBackward,  // input gradients of the micro-batch to the previous stage
  kRecvBackward,  // output gradients of the micro-batch from the next stage
};

struct PipeStep {
  PipeAction action = PipeAction::kForward;
  uint32_t micro_batch = 0;
  uint32_t group = 0;  // non-zero: issued together with the neighbouring steps of the same number
};

// Steps of `stage` (0-based) of `stages` with `micro_batches` per iteration. O(micro_batches).
std::vector<PipeStep> one_f_one_b(uint32_t stage, uint32_t stages, uint32_t micro_batches);

}  // namespace collide::traces::synth
