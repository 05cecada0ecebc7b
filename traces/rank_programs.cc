#include "traces/rank_programs.h"

#include <fmt/format.h>

#include "traces/trace_io.h"

namespace collide::traces {

Result<RankPrograms> read_rank_programs(const std::string& path, const std::set<uint32_t>& ranks) {
  auto reader = TraceReader::open(path);
  if (!reader.ok()) return reader.status();
  RankPrograms programs;
  programs.header = (*reader)->header();
  for (uint32_t r : ranks) {
    if (r >= programs.header.world_size()) {
      return invalid_argument(fmt::format("{}: rank {} is outside the trace's {} ranks", path, r,
                                          programs.header.world_size()));
    }
    programs.ops[r];
  }
  v1::Op op;
  while (true) {
    auto more = (*reader)->next(op);
    if (!more.ok()) return more.status();
    if (!*more) break;
    auto it = programs.ops.find(op.rank());
    if (it == programs.ops.end()) continue;
    if (op.index() != it->second.size()) {
      return invalid_argument(fmt::format("{}: rank {} op index {} where {} was expected", path,
                                          op.rank(), op.index(), it->second.size()));
    }
    it->second.push_back(op);
  }
  return programs;
}

}  // namespace collide::traces
