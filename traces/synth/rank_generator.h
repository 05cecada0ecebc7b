#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "collide/model.pb.h"
#include "collide/trace.pb.h"
#include "common/result.h"
#include "traces/synth/rank_layout.h"

// One rank's collectives, in the order a Megatron-style training job issues them, generated on
// the fly: nothing of other ranks is held, and one rank's state is a handful of counters plus its
// stage's pipeline schedule (a few entries per micro-batch).
//
// Per iteration, for each step of the stage's 1F1B schedule (pipeline_schedule.h):
//  - forward of a micro-batch, per layer of the stage: [ZeRO-3: all-gather of the layer's
//    parameters over DP] attention then MLP, each ending in a TP all-reduce of the activations
//    (b*s*h elements), or with sequence parallelism an all-gather before and a reduce-scatter
//    after (b*s*h/TP each); a mixture-of-experts MLP does an EP all-to-all dispatch before the
//    experts and a combine after (b*s*top_k*h/EP elements to each peer, /TP with sequence
//    parallelism);
//  - backward, layers in reverse: the same collectives in reverse order (the backward of an
//    all-gather is a reduce-scatter and vice versa), [ZeRO-3: all-gather of the parameters
//    before, reduce-scatter of the layer's gradients after, every micro-batch as FSDP without
//    no_sync does];
//  - pipeline sends and receives of activations/gradients (b*s*h elements) between stages.
// After the last backward (ZeRO 0-2): the data-parallel gradient sync over this rank's shard
// (dense parameters / (TP*PP) per rank, in buckets of dp_bucket_bytes): ZeRO-0 all-reduces each
// bucket; ZeRO-1/2 reduce-scatter each bucket and, after the optimizer step, all-gather the
// updated parameters. With expert parallelism the experts' gradients sync over the
// expert-data-parallel group instead (expert parameters / (TP*PP*EP) per rank).
// Parameters are spread evenly over layers (embeddings included); layers are spread over stages
// as evenly as possible, the first stages taking one more when PP does not divide them.
//
// Compute: a layer's forward takes 2 * (active parameters of the layer / TP) * b*s FLOPs plus
// 4*b*s^2*h/TP for attention scores, its backward twice that, at gpu_tflops * efficiency; the
// time is split evenly between the layer's attention and MLP halves and recorded as the
// compute_before_ns of the next op the rank issues (no gaps when gpu_tflops is 0).
namespace collide::traces::synth {

// What a spec implies for every rank (computed once).
struct JobShape {
  uint32_t micro_batches = 0;
  uint32_t element_bytes = 0;
  uint64_t activation_elements = 0;      // b*s*h
  uint64_t sequence_shard_elements = 0;  // b*s*h/TP (sequence parallel)
  uint64_t all_to_all_elements = 0;      // to each EP peer
  double dp_layer_parameters = 0;        // per layer, synced over DP (all but the experts under EP)
  double edp_layer_parameters = 0;       // per layer and EP rank, synced over EDP
  double forward_ns_per_layer = 0;       // 0 without a FLOP rate
  double backward_ns_per_layer = 0;
  std::vector<std::pair<uint32_t, uint32_t>> stage_layers;  // [first, last) per stage
};

JobShape job_shape(const v1::ModelSpec& spec);

class RankGenerator {
 public:
  using Sink = std::function<Status(const v1::Op&)>;

  // `spec` should have passed validate() (model_spec.h); if it does not, generate() returns the
  // validation error.
  explicit RankGenerator(const v1::ModelSpec& spec);

  // Generates every op of `rank`, in issue order with Op.index from 0, into `sink`; stops at the
  // first error the sink returns.
  Status generate(uint32_t rank, const Sink& sink) const;

  const RankLayout& layout() const { return layout_; }
  const JobShape& shape() const { return shape_; }

 private:
  v1::ModelSpec spec_;
  Status valid_;
  RankLayout layout_;
  JobShape shape_;
};

}  // namespace collide::traces::synth
