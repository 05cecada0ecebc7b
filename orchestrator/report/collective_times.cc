#include "orchestrator/report/collective_times.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "traces/op_types.h"

namespace collide::orchestrator::report {

std::vector<FaultWindow> held_fault_windows(const RunResult& run) {
  uint64_t t0 = run.ops.empty() ? 0 : UINT64_MAX, t1 = 0;
  for (const OpTiming& op : run.ops) {
    t0 = std::min(t0, op.start_ns);
    t1 = std::max(t1, op.end_ns);
  }
  std::vector<FaultWindow> held;
  for (FaultWindow f : run.faults) {
    if (f.start_ns == 0 || (!run.ops.empty() && f.start_ns >= t1)) continue;
    f.start_ns = f.start_ns > t0 ? f.start_ns - t0 : 0;
    f.end_ns = f.end_ns > t0 ? f.end_ns - t0 : 0;
    held.push_back(std::move(f));
  }
  return held;
}

std::vector<CollectiveTime> collective_times(const RunResult& run) {
  // Order each rank's ops, then number each rank's collectives per communicator.
  std::vector<const OpTiming*> ops;
  for (const OpTiming& op : run.ops) ops.push_back(&op);
  std::sort(ops.begin(), ops.end(), [](const OpTiming* a, const OpTiming* b) {
    return std::tie(a->rank, a->op_index) < std::tie(b->rank, b->op_index);
  });
  std::map<std::pair<uint32_t, std::string>, uint64_t> next_sequence;
  std::map<std::pair<std::string, uint64_t>, CollectiveTime> by_key;
  for (const OpTiming* op : ops) {
    if (traces::is_point_to_point(op->kind)) continue;
    const uint64_t seq = next_sequence[{op->rank, op->comm}]++;
    auto [it, fresh] = by_key.try_emplace({op->comm, seq});
    CollectiveTime& c = it->second;
    if (fresh) {
      c.comm = op->comm;
      c.sequence = seq;
      c.kind = op->kind;
      c.comm_size = op->comm_size;
      c.bytes = op->bytes;
      c.datatype = op->datatype;
      c.reduce_op = op->reduce_op;
      c.iteration = op->iteration;
      c.start_ns = op->start_ns;
      c.end_ns = op->end_ns;
    }
    c.start_ns = std::min(c.start_ns, op->start_ns);
    c.end_ns = std::max(c.end_ns, op->end_ns);
    c.failed = c.failed || op->failed;
    c.production_ns = std::max(c.production_ns, op->production_ns);
    ++c.ranks_seen;
  }
  std::vector<CollectiveTime> out;
  out.reserve(by_key.size());
  for (auto& [key, c] : by_key) out.push_back(std::move(c));
  std::sort(out.begin(), out.end(), [](const CollectiveTime& a, const CollectiveTime& b) {
    return a.start_ns < b.start_ns;
  });
  return out;
}

uint64_t job_completion_ns(const RunResult& run) {
  if (run.ops.empty()) return 0;
  uint64_t start = UINT64_MAX, end = 0;
  for (const OpTiming& op : run.ops) {
    start = std::min(start, op.start_ns);
    end = std::max(end, op.end_ns);
  }
  return end - start;
}

std::vector<uint64_t> iteration_completion_ns(const RunResult& run) {
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> spans;
  for (const OpTiming& op : run.ops) {
    auto [it, fresh] = spans.try_emplace(op.iteration, op.start_ns, op.end_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, op.start_ns);
      it->second.second = std::max(it->second.second, op.end_ns);
    }
  }
  std::vector<uint64_t> out;
  for (const auto& [iteration, span] : spans) {
    if (out.size() <= iteration) out.resize(iteration + 1, 0);
    out[iteration] = span.second - span.first;
  }
  return out;
}

}  // namespace collide::orchestrator::report
