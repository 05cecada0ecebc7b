#include "replayer/collectives/step_builder.h"

#include <utility>

namespace collide::replayer::collectives {

uint64_t share_of(uint64_t total, uint32_t parts, uint32_t index) {
  return total / parts + (index < total % parts ? 1 : 0);
}

StepBuilder::StepBuilder(ExpandedOp& out, const Placement& placement, uint64_t slice_bytes,
                         uint32_t qps_per_connection)
    : out_(out), placement_(placement), slice_bytes_(slice_bytes), qps_(qps_per_connection) {}

uint32_t StepBuilder::slice_count(uint64_t bytes) const {
  if (bytes <= slice_bytes_) return 1;
  return static_cast<uint32_t>((bytes + slice_bytes_ - 1) / slice_bytes_);
}

uint64_t StepBuilder::slice_bytes(uint64_t bytes, uint32_t slice) const {
  return share_of(bytes, slice_count(bytes), slice);
}

uint32_t StepBuilder::add(StepKind kind, uint32_t peer, uint64_t bytes, FlowTag tag,
                          StepDeps deps) {
  Step step;
  step.id = static_cast<uint32_t>(out_.steps.size());
  step.kind = kind;
  step.peer = peer;
  step.bytes = bytes;
  step.tag = tag;
  step.qp = static_cast<uint16_t>(tag.slice % qps_);
  step.local = placement_.same_host(out_.rank, peer);
  step.deps = std::move(deps);
  out_.steps.push_back(std::move(step));
  return out_.steps.back().id;
}

}  // namespace collide::replayer::collectives
