#include "orchestrator/run/op_catalog.h"

#include <fmt/format.h>

#include "traces/trace_io.h"

namespace collide::orchestrator {

Result<OpCatalog> OpCatalog::read(const std::string& path) {
  auto reader = traces::TraceReader::open(path);
  if (!reader.ok()) return reader.status();
  std::unordered_map<std::string, uint32_t> comm_sizes;
  for (const v1::Communicator& c : (*reader)->header().communicators()) {
    comm_sizes[c.id()] = static_cast<uint32_t>(c.ranks_size());
  }
  OpCatalog catalog;
  v1::Op op;
  for (;;) {
    auto more = (*reader)->next(op);
    if (!more.ok()) return more.status();
    if (!*more) break;
    std::vector<Entry>& ops = catalog.ops_of_rank_[op.rank()];
    // Ops come in each rank's order; an index past the end leaves a gap of unknown entries.
    if (ops.size() <= op.index()) ops.resize(op.index() + 1);
    Entry& e = ops[op.index()];
    e.datatype = op.datatype();
    e.reduce_op = op.reduce_op();
    e.iteration = op.iteration();
    const auto size = comm_sizes.find(op.comm());
    e.comm_size = size == comm_sizes.end() ? 0 : size->second;
    e.production_ns = op.measured_duration_ns();
  }
  return catalog;
}

const OpCatalog::Entry* OpCatalog::find(uint32_t rank, uint64_t index) const {
  const auto it = ops_of_rank_.find(rank);
  if (it == ops_of_rank_.end() || index >= it->second.size()) return nullptr;
  return &it->second[index];
}

}  // namespace collide::orchestrator
