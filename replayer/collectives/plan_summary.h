#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collide/trace.pb.h"
#include "replayer/collectives/placement.h"
#include "replayer/collectives/step.h"

// What an expansion puts on the wire, accumulated op by op so a trace of any length is summarized
// in memory proportional to its ranks and host pairs, not its ops.
namespace collide::replayer::collectives {

struct OpPlan {
  uint32_t rank = 0;
  uint64_t op_index = 0;
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  std::string comm;
  uint32_t comm_size = 0;
  uint64_t bytes = 0;            // the op's own size (Op.bytes)
  uint64_t network_sent = 0;     // sent to other hosts
  uint64_t local_sent = 0;       // sent inside the host
  uint64_t pxn_relayed = 0;      // of network_sent: carried on for a host-mate (PXN)
  uint32_t steps = 0;
  double busbw_factor = 0;       // nccl-tests convention for the kind and communicator size
};

struct RankTotals {
  uint64_t ops = 0;
  uint64_t steps = 0;
  uint64_t network_sent = 0;
  uint64_t network_received = 0;
  uint64_t local_sent = 0;
  uint64_t pxn_relayed = 0;
};

class PlanSummary {
 public:
  explicit PlanSummary(uint32_t world_size) : ranks_(world_size) {}

  // Accounts one expanded op; returns its per-op line.
  OpPlan add(const v1::Op& op, uint32_t comm_size, const ExpandedOp& expanded,
             const Placement& placement);

  const std::vector<RankTotals>& ranks() const { return ranks_; }
  // Bytes sent from one host to another (only pairs that carried traffic).
  const std::map<std::pair<uint32_t, uint32_t>, uint64_t>& host_pairs() const {
    return host_pairs_;
  }
  uint64_t total_network_bytes() const;
  // Of those, bytes a rank sent for a host-mate on another rail (NCCL's PXN relay).
  uint64_t total_pxn_relayed_bytes() const;

 private:
  std::vector<RankTotals> ranks_;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> host_pairs_;
};

}  // namespace collide::replayer::collectives
