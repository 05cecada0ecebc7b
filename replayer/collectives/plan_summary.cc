#include "replayer/collectives/plan_summary.h"

#include "replayer/collectives/accounting.h"

namespace collide::replayer::collectives {

OpPlan PlanSummary::add(const v1::Op& op, uint32_t comm_size, const ExpandedOp& expanded,
                        const Placement& placement) {
  OpPlan line;
  line.rank = op.rank();
  line.op_index = op.index();
  line.kind = op.kind();
  line.comm = op.comm();
  line.comm_size = comm_size;
  line.bytes = op.bytes();
  line.steps = static_cast<uint32_t>(expanded.steps.size());
  line.busbw_factor = busbw_factor(op.kind(), comm_size);
  RankTotals& me = ranks_[op.rank()];
  me.ops += 1;
  me.steps += expanded.steps.size();
  for (const Step& s : expanded.steps) {
    if (s.kind == StepKind::kRecv) {
      if (!s.local) me.network_received += s.bytes;
      continue;
    }
    if (s.local) {
      line.local_sent += s.bytes;
      continue;
    }
    line.network_sent += s.bytes;
    if (s.tag.relay_from != 0) line.pxn_relayed += s.bytes;
    host_pairs_[{placement.host_of_rank[op.rank()], placement.host_of_rank[s.peer]}] += s.bytes;
  }
  me.network_sent += line.network_sent;
  me.local_sent += line.local_sent;
  me.pxn_relayed += line.pxn_relayed;
  return line;
}

uint64_t PlanSummary::total_network_bytes() const {
  uint64_t total = 0;
  for (const RankTotals& r : ranks_) total += r.network_sent;
  return total;
}

uint64_t PlanSummary::total_pxn_relayed_bytes() const {
  uint64_t total = 0;
  for (const RankTotals& r : ranks_) total += r.pxn_relayed;
  return total;
}

}  // namespace collide::replayer::collectives
