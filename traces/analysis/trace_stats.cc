#include "traces/analysis/trace_stats.h"

#include <limits>
#include <utility>

#include "traces/analysis/traffic_model.h"
#include "traces/trace_io.h"

namespace collide::traces::analysis {
namespace {

// Totals saturate rather than wrap, and say so: a wrapped total would be silently wrong.
bool add_saturating(uint64_t& total, uint64_t value) {
  if (__builtin_add_overflow(total, value, &total)) {
    total = std::numeric_limits<uint64_t>::max();
    return true;
  }
  return false;
}

constexpr uint64_t kProgressEvery = 1 << 16;

}  // namespace

void TrafficTotals::add(const TrafficTotals& other) {
  issued_ops += other.issued_ops;
  instances += other.instances;
  add_saturating(issued_bytes, other.issued_bytes);
  add_saturating(full_mesh_bytes, other.full_mesh_bytes);
  add_saturating(nccl_bytes, other.nccl_bytes);
}

EpochTotals project_to_epoch(const TraceStats& stats, uint64_t minibatches) {
  EpochTotals epoch;
  epoch.minibatches = minibatches;
  epoch.iterations_in_trace = stats.by_iteration.size();
  if (epoch.iterations_in_trace == 0) return epoch;
  const double scale =
      static_cast<double>(minibatches) / static_cast<double>(epoch.iterations_in_trace);
  epoch.issued_bytes = static_cast<double>(stats.job.issued_bytes) * scale;
  epoch.full_mesh_bytes = static_cast<double>(stats.job.full_mesh_bytes) * scale;
  epoch.nccl_bytes = static_cast<double>(stats.job.nccl_bytes) * scale;
  return epoch;
}

StatsAccumulator::StatsAccumulator(const v1::TraceHeader& header) : frontier_(header) {
  stats_.world_size = header.world_size();
  for (const v1::Communicator& c : header.communicators()) {
    if (comm_index_.count(c.id()) != 0) continue;  // a duplicate id: validate reports it
    comm_index_.emplace(c.id(), static_cast<uint32_t>(comms_.size()));
    CommunicatorStats& out = stats_.by_communicator.emplace_back();
    out.id = c.id();
    out.name = c.name();
    out.size = static_cast<uint32_t>(c.ranks_size());
    CommState& state = comms_.emplace_back();
    for (int i = 0; i < c.ranks_size(); ++i) state.comm_rank.emplace(c.ranks(i), i);
    state.issued_collectives.assign(c.ranks_size(), 0);
  }
}

void StatsAccumulator::add(const v1::Op& op) {
  // What this op record adds: always its issue; traffic when it is the first issue of a
  // collective instance seen, a send, or an all-to-allv (whose every rank sends its own sizes).
  frontier_.add(op);
  TrafficTotals delta;
  delta.issued_ops = 1;
  delta.issued_bytes = op.bytes();
  const auto it = comm_index_.find(op.comm());
  const uint32_t comm = it == comm_index_.end() ? UINT32_MAX : it->second;
  const uint32_t n = comm == UINT32_MAX ? 0 : stats_.by_communicator[comm].size;
  uint32_t self = UINT32_MAX;
  if (comm != UINT32_MAX) {
    const auto member = comms_[comm].comm_rank.find(op.rank());
    if (member != comms_[comm].comm_rank.end()) self = member->second;
  }
  if (op.kind() == v1::OP_KIND_SEND) {
    delta.instances = 1;
    delta.full_mesh_bytes = op.bytes();
    delta.nccl_bytes = op.bytes();
    if (self == UINT32_MAX) ++stats_.ops_unaccounted;
  } else if (op.kind() == v1::OP_KIND_RECV) {
    if (self == UINT32_MAX) ++stats_.ops_unaccounted;
  } else if (self == UINT32_MAX) {
    ++stats_.ops_unaccounted;
  } else {
    // The k-th collective a member issues on this communicator is instance k; the first member
    // to reach it accounts for its traffic, the others' issues of it only add to issued figures.
    CommState& state = comms_[comm];
    const uint64_t k = state.issued_collectives[self]++;
    const bool first_issue = k == state.instances;
    if (first_issue) {
      state.instances = k + 1;
      delta.instances = 1;
    }
    if (op.kind() == v1::OP_KIND_ALL_TO_ALLV) {
      delta.full_mesh_bytes = alltoallv_sent_bytes(op, self);
      delta.nccl_bytes = delta.full_mesh_bytes;
    } else if (first_issue) {
      delta.full_mesh_bytes = full_mesh_sent_bytes(op.kind(), n, op.bytes());
      delta.nccl_bytes = total_sent_bytes(op.kind(), n, op.bytes());
    }
  }
  stats_.by_kind[op.kind()].add(delta);
  stats_.by_iteration[op.iteration()].add(delta);
  if (comm != UINT32_MAX) stats_.by_communicator[comm].totals.add(delta);
  // Every partial total is at most the job's, so the job's overflow check covers them all.
  TrafficTotals& job = stats_.job;
  job.issued_ops += delta.issued_ops;
  job.instances += delta.instances;
  stats_.overflowed |= add_saturating(job.issued_bytes, delta.issued_bytes);
  stats_.overflowed |= add_saturating(job.full_mesh_bytes, delta.full_mesh_bytes);
  stats_.overflowed |= add_saturating(job.nccl_bytes, delta.nccl_bytes);
}

TraceStats StatsAccumulator::finish() && {
  stats_.frontier = std::move(frontier_).finish();
  return std::move(stats_);
}

Result<TraceStats> compute_trace_stats(const std::string& path,
                                       const std::function<void(uint64_t ops)>& progress) {
  auto reader = TraceReader::open(path);
  if (!reader.ok()) return reader.status();
  StatsAccumulator accumulator((*reader)->header());
  v1::Op op;
  while (true) {
    auto more = (*reader)->next(op);
    if (!more.ok()) return more.status();
    if (!*more) break;
    accumulator.add(op);
    if (progress && (*reader)->ops_read() % kProgressEvery == 0) progress((*reader)->ops_read());
  }
  return std::move(accumulator).finish();
}

}  // namespace collide::traces::analysis
