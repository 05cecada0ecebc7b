#include "traces/synth/pipeline_schedule.h"

#include <algorithm>

namespace collide::traces::synth {

std::vector<PipeStep> one_f_one_b(uint32_t stage, uint32_t stages, uint32_t micro_batches) {
  const bool first = stage == 0;
  const bool last = stage + 1 == stages;
  const uint32_t warmup = std::min(stages - stage - 1, micro_batches);
  const uint32_t steady = micro_batches - warmup;
  std::vector<PipeStep> steps;
  steps.reserve(size_t{micro_batches} * 6);
  uint32_t group = 0;
  auto add = [&steps](PipeAction action, uint32_t mb, uint32_t g = 0) {
    steps.push_back({action, mb, g});
  };

  for (uint32_t i = 0; i < warmup; ++i) {
    if (!first) add(PipeAction::kRecvForward, i);
    add(PipeAction::kForward, i);
    if (!last) add(PipeAction::kSendForward, i);
  }
  if (steady > 0 && !first) add(PipeAction::kRecvForward, warmup);
  for (uint32_t i = 0; i < steady; ++i) {
    const uint32_t fwd = warmup + i;
    const uint32_t bwd = i;
    add(PipeAction::kForward, fwd);
    if (!last) {
      ++group;
      add(PipeAction::kSendForward, fwd, group);
      add(PipeAction::kRecvBackward, bwd, group);
    }
    add(PipeAction::kBackward, bwd);
    if (!first) {
      if (i + 1 == steady) {
        add(PipeAction::kSendBackward, bwd);
      } else {
        ++group;
        add(PipeAction::kSendBackward, bwd, group);
        add(PipeAction::kRecvForward, fwd + 1, group);
      }
    }
  }
  for (uint32_t i = 0; i < warmup; ++i) {
    const uint32_t bwd = steady + i;
    if (!last) add(PipeAction::kRecvBackward, bwd);
    add(PipeAction::kBackward, bwd);
    if (!first) add(PipeAction::kSendBackward, bwd);
  }
  return steps;
}

}  // namespace collide::traces::synth
