#pragma once

#include <cstdint>
#include <string>

#include "collide/model.pb.h"
#include "collide/trace.pb.h"

// Where each global rank sits in the parallel job, in Megatron-LM's default order (tp-cp-ep-dp-pp
// with no context parallelism): tensor parallel innermost, then data parallel, then pipeline
// stages outermost,
//
//   rank = tp + TP * (dp + DP * pp)
//
// so the ranks of a TP group are consecutive (one host's NVLink domain when TP divides the GPUs
// per host). Expert parallelism is carved out of data parallelism, EP innermost: dp = ep + EP *
// edp, so an EP group holds EP consecutive data-parallel replicas and the expert-data-parallel
// (edp) group the replicas that hold the same experts.
namespace collide::traces::synth {

struct Coords {
  uint32_t tp = 0;
  uint32_t dp = 0;
  uint32_t pp = 0;
};

// The communicators a rank belongs to: ids as they appear in the trace header and in Op.comm.
// Empty where the group would hold a single rank (nothing to communicate).
struct RankComms {
  std::string tp, dp, pp, ep, edp;
};

class RankLayout {
 public:
  explicit RankLayout(const v1::ParallelismSpec& p);

  uint32_t world() const { return tp_ * dp_ * pp_; }
  Coords coords(uint32_t rank) const;
  uint32_t rank_of(const Coords& c) const { return c.tp + tp_ * (c.dp + dp_ * c.pp); }
  RankComms comms_of(uint32_t rank) const;

  // Appends every communicator of the job to `header` in a fixed order: world, then the TP, DP,
  // PP, EP and EDP groups, each kind by group number. Comm ranks follow the coordinate they vary
  // (a PP group's comm rank is the stage).
  void add_communicators(v1::TraceHeader& header) const;

 private:
  uint32_t tp_, dp_, pp_, ep_;
};

}  // namespace collide::traces::synth
