#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/collectives/expander.h"
#include "replayer/engine/lane_gate.h"
#include "replayer/engine/op_record.h"
#include "replayer/transport/packet.h"

namespace collide::replayer::engine {

using transport::Nanos;

// A step of the running batch: the op's slot in the batch and the step's id in that op.
struct StepRef {
  uint32_t slot = 0;
  uint32_t step = 0;
};

struct ReadyStep {
  StepRef ref;
  const collectives::Step* step = nullptr;
  const std::string* comm = nullptr;
};

// Runs one rank's ops the way NCCL issues them on one stream: one op at a time, except that the
// ops of one group (ncclGroupStart/End, e.g. the sends and receives of an all-to-all made of
// point-to-point calls) run together. Inside an op, a step becomes ready when the steps it
// depends on are done. Pure: the engine reports completions and asks what is ready. On a lane of
// a NIC split over several (lane_gate.h), it runs only its lane's channels of every op, and starts
// an op once every lane has finished the one before.
class RankRunner {
 public:
  RankRunner(uint32_t rank, std::vector<v1::Op> ops, bool honor_compute_gaps, RankLane lane = {});

  // Starts the next batch once the running one is done (and its compute gap has passed), then
  // returns the steps that became ready since the last call. Pointers stay valid until the batch
  // is done.
  Result<std::vector<ReadyStep>> advance(Nanos now, collectives::Expander& expander);
  void complete(StepRef ref, Nanos now);
  // Ends the rank: the running ops are recorded as failed with `why`.
  void fail(const std::string& why, Nanos now);

  bool finished() const { return failed_ || (next_op_ >= ops_.size() && slots_remaining_ == 0); }
  bool failed() const { return failed_; }
  // When a compute gap ends and advance() has work again.
  std::optional<Nanos> wake_at() const;
  uint32_t rank() const { return rank_; }
  const v1::Op& op_in_slot(uint32_t slot) const { return batch_[slot].op; }

  std::vector<OpRecord> take_records();

 private:
  struct Slot {
    v1::Op op;
    collectives::ExpandedOp expanded;
    std::vector<uint32_t> unmet;                   // per step: dependencies not yet done
    std::vector<std::vector<uint32_t>> dependents;  // per step: steps waiting on it
    uint32_t remaining = 0;
    OpRecord record;
  };

  Status start_batch(Nanos now, collectives::Expander& expander);
  void finish_slot(Slot& slot, Nanos now);

  uint32_t rank_;
  std::vector<v1::Op> ops_;
  bool honor_compute_gaps_;
  RankLane lane_;
  uint64_t batches_finished_ = 0;
  size_t next_op_ = 0;
  std::vector<Slot> batch_;
  uint32_t slots_remaining_ = 0;
  std::vector<StepRef> ready_;
  Nanos last_batch_end_ = 0;
  std::optional<Nanos> next_start_;
  bool failed_ = false;
  std::vector<OpRecord> records_;
};

}  // namespace collide::replayer::engine
