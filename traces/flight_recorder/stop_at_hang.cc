#include "traces/flight_recorder/stop_at_hang.h"

#include <fmt/format.h>

#include <unordered_map>

#include "traces/analysis/hang_frontier.h"
#include "traces/op_types.h"

namespace collide::traces::flight_recorder {

HangCut stop_at_hang(const v1::TraceHeader& header,
                     std::vector<std::vector<v1::Op>>& ops_by_rank) {
  analysis::HangFrontierAccumulator accumulator(header);
  for (const auto& ops : ops_by_rank) {
    for (const v1::Op& op : ops) accumulator.add(op);
  }
  const analysis::HangFrontier frontier = std::move(accumulator).finish();
  HangCut cut;
  cut.hung = frontier.hung();
  if (!cut.hung) return cut;
  // Per hung communicator, the first collective (by sequence number) left out.
  std::unordered_map<std::string, uint64_t> first_left_out;
  for (const analysis::FrontierCollective& f : frontier.collectives) {
    const bool all_started = f.scheduled.empty() && f.not_issued.empty() && f.no_record.empty();
    first_left_out[f.comm] = all_started ? f.seq + 1 : f.seq;
    cut.where.push_back(
        all_started
            ? fmt::format("comm {} ({}): kept up to collective #{}, which every rank started "
                          "and none completed (the hang is inside it); later ones left out",
                          f.comm, f.name, f.seq)
            : fmt::format("{}; it and the later ones left out", analysis::describe(f)));
  }
  if (frontier.point_to_point_total > 0) {
    cut.where.push_back(fmt::format("{} send/recv not completed left out",
                                    frontier.point_to_point_total));
  }
  for (auto& ops : ops_by_rank) {
    std::vector<v1::Op> kept;
    kept.reserve(ops.size());
    for (v1::Op& op : ops) {
      bool keep = true;
      if (is_point_to_point(op.kind())) {
        keep = op.state() == v1::OP_STATE_COMPLETED ||
               op.state() == v1::OP_STATE_UNSPECIFIED;
      } else {
        const auto it = first_left_out.find(op.comm());
        keep = it == first_left_out.end() || op.op_count() < it->second;
      }
      if (!keep) {
        ++cut.ops_left_out;
        continue;
      }
      op.set_index(kept.size());
      kept.push_back(std::move(op));
    }
    ops = std::move(kept);
  }
  return cut;
}

}  // namespace collide::traces::flight_recorder
