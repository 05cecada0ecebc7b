#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "traces/aicb/aicb_workload.h"

// Expands an AICB workload into per-rank ops.
//
// Rank layout (Megatron's): TP innermost, then DP, then PP:
//   rank = stage * (tp * dp) + dp_index * tp + tp_index,  dp = all_gpus / (tp * pp).
// Groups: TP = same stage and dp_index; DP = same stage and tp_index; PP = same dp_index and
// tp_index, in stage order. Expert parallelism is carved out of DP: EP = ep consecutive DP ranks
// (dp_index / ep equal), DP_EP = the DP ranks with the same position inside their EP group
// (dp_index % ep equal). Unsuffixed comm types use TP in the fwd and ig columns and DP in wg.
//
// One iteration, in the order SimAI's HYBRID_TRANSFORMER_FWD_IN_BCKWD issues it, on every rank:
//   forward:  [recv pp_comm from stage-1]; per layer: fwd compute, fwd comm; [send to stage+1]
//   backward: [recv pp_comm from stage+1]; per layer in reverse: ig compute, ig comm, wg compute,
//             wg comm; [send to stage-1]
// Each layer line is expanded once: AICB already repeats the layers of every micro-batch (ga) in
// the file, and its per-stage layer count already divides by pp. vpp is recorded, not modelled.
// Compute accumulates into the next op's compute_before_ns; compute after the last op is dropped.
// Sizes are the whole buffer, as SimAI reads them: all-reduce and broadcast move `bytes`;
// all-gather, reduce-scatter and all-to-all become NCCL's per-rank count, bytes / group size
// (rounded down). Communication in a group of one rank is nothing on the network and is skipped.
// update_time (column 12) is a SimAI processing delay, not GPU work, and is ignored.
// Ops carry datatype UINT8 with count = bytes (the file has no element type).
namespace collide::traces::aicb {

struct Layout {
  uint32_t tp = 1, dp = 1, pp = 1, ep = 1;
  uint32_t world() const { return tp * dp * pp; }
  uint32_t stage(uint32_t rank) const { return rank / (tp * dp); }
  uint32_t dp_index(uint32_t rank) const { return (rank / tp) % dp; }
  uint32_t tp_index(uint32_t rank) const { return rank % tp; }
};

class Expansion {
 public:
  // Checks the parallel degrees against all_gpus and builds the communicators the layers use.
  static Result<Expansion> create(const Workload& workload, const ImportOptions& options,
                                  ImportReport& report);

  const Layout& layout() const { return layout_; }
  // Every communicator some op uses, in a fixed order (tp, dp, pp, ep, dp_ep groups by index).
  const std::vector<v1::Communicator>& communicators() const { return comms_; }
  // The ops of `rank`, in issue order.
  std::vector<v1::Op> rank_ops(uint32_t rank) const;
  // Header facts: the layout and the workload's parameters.
  void describe(v1::TraceHeader& header) const;

 private:
  enum Kind { kTp = 0, kDp, kPp, kEp, kDpEp, kKinds };
  // The group a comm column names: its suffix where it has one, else the column's own group
  // (TP for the forward and input-gradient columns, DP for the weight-gradient column).
  static Kind group_kind(const Comm& c, Kind fallback);
  // Communicator id and this rank's position in it.
  struct Member {
    const v1::Communicator* comm = nullptr;
    uint32_t position = 0;
  };
  Member member(Kind kind, uint32_t rank) const;
  uint32_t group_index(Kind kind, uint32_t rank) const;
  std::vector<uint32_t> group_ranks(Kind kind, uint32_t index) const;
  uint32_t group_count(Kind kind) const;
  uint32_t group_size(Kind kind) const;

  const Workload* workload_ = nullptr;
  Layout layout_;
  bool used_[kKinds] = {};
  std::vector<v1::Communicator> comms_;
  uint32_t first_comm_[kKinds] = {};  // index into comms_ of each kind's group 0
};

}  // namespace collide::traces::aicb
