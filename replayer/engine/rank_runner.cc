#include "replayer/engine/rank_runner.h"

#include "replayer/collectives/channel_lanes.h"

namespace collide::replayer::engine {

RankRunner::RankRunner(uint32_t rank, std::vector<v1::Op> ops, bool honor_compute_gaps,
                       RankLane lane)
    : rank_(rank), ops_(std::move(ops)), honor_compute_gaps_(honor_compute_gaps), lane_(lane) {}

std::optional<Nanos> RankRunner::wake_at() const {
  if (slots_remaining_ > 0 || next_op_ >= ops_.size() || failed_) return std::nullopt;
  return next_start_;
}

Status RankRunner::start_batch(Nanos now, collectives::Expander& expander) {
  const uint32_t group = ops_[next_op_].group();
  size_t end = next_op_ + 1;
  while (group != 0 && end < ops_.size() && ops_[end].group() == group) ++end;
  batch_.clear();
  batch_.resize(end - next_op_);
  slots_remaining_ = static_cast<uint32_t>(batch_.size());
  for (size_t i = 0; i < batch_.size(); ++i) {
    Slot& slot = batch_[i];
    slot.op = std::move(ops_[next_op_ + i]);
    auto expanded = expander.expand(slot.op);
    if (!expanded.ok()) return expanded.status();
    slot.expanded = std::move(expanded).value();
    COLLIDE_RETURN_IF_ERROR(collectives::keep_lane(slot.expanded, lane_.index, lane_.count, lane_.nics_per_host));
    const size_t steps = slot.expanded.steps.size();
    slot.unmet.assign(steps, 0);
    slot.dependents.assign(steps, {});
    slot.remaining = static_cast<uint32_t>(steps);
    slot.record.rank = rank_;
    slot.record.op_index = slot.op.index();
    slot.record.kind = slot.op.kind();
    slot.record.comm = slot.op.comm();
    slot.record.bytes = slot.op.bytes();
    slot.record.start_ns = now;
    for (const collectives::Step& s : slot.expanded.steps) {
      slot.unmet[s.id] = static_cast<uint32_t>(s.deps.size());
      for (uint32_t d : s.deps) slot.dependents[d].push_back(s.id);
      if (s.kind == collectives::StepKind::kSend && !s.local) slot.record.network_bytes += s.bytes;
      if (s.deps.empty()) ready_.push_back({static_cast<uint32_t>(i), s.id});
    }
  }
  next_op_ = end;
  // Ops without steps (empty buffers, one-rank communicators) are done at once.
  for (Slot& slot : batch_) {
    if (slot.remaining == 0) finish_slot(slot, now);
  }
  return {};
}

Result<std::vector<ReadyStep>> RankRunner::advance(Nanos now, collectives::Expander& expander) {
  while (!failed_ && slots_remaining_ == 0 && next_op_ < ops_.size()) {
    if (!next_start_) {
      const v1::Op& next = ops_[next_op_];
      const Nanos gap = honor_compute_gaps_ && next.has_compute_before_ns()
                            ? next.compute_before_ns()
                            : 0;
      next_start_ = last_batch_end_ + gap;
    }
    if (now < *next_start_) break;
    if (lane_.gate != nullptr && !lane_.gate->all_finished(batches_finished_)) break;
    next_start_.reset();
    if (Status s = start_batch(now, expander); !s.ok()) {
      fail(s.message(), now);
      return s;
    }
  }
  std::vector<ReadyStep> out;
  out.reserve(ready_.size());
  for (const StepRef& r : ready_) {
    Slot& slot = batch_[r.slot];
    out.push_back({r, &slot.expanded.steps[r.step], &slot.op.comm()});
  }
  ready_.clear();
  return out;
}

void RankRunner::complete(StepRef ref, Nanos now) {
  Slot& slot = batch_[ref.slot];
  for (uint32_t d : slot.dependents[ref.step]) {
    if (--slot.unmet[d] == 0) ready_.push_back({ref.slot, d});
  }
  if (--slot.remaining == 0) finish_slot(slot, now);
}

void RankRunner::finish_slot(Slot& slot, Nanos now) {
  slot.record.end_ns = now;
  records_.push_back(slot.record);
  // The finished batch stays in place (callers may hold its steps) until the next one starts.
  if (--slots_remaining_ == 0) {
    last_batch_end_ = now;
    ++batches_finished_;
    if (lane_.gate != nullptr) lane_.gate->finished_batch(lane_.index);
  }
}

void RankRunner::fail(const std::string& why, Nanos now) {
  if (failed_) return;
  failed_ = true;
  for (Slot& slot : batch_) {
    if (slot.remaining == 0) continue;
    slot.record.end_ns = now;
    slot.record.failed = true;
    slot.record.failure = why;
    records_.push_back(slot.record);
  }
  slots_remaining_ = 0;
  ready_.clear();
}

std::vector<OpRecord> RankRunner::take_records() {
  std::vector<OpRecord> out;
  out.swap(records_);
  return out;
}

}  // namespace collide::replayer::engine
