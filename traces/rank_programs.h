#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"

namespace collide::traces {

// The ops of some ranks of a trace, each rank's in its issue order: what one host replays.
struct RankPrograms {
  v1::TraceHeader header;
  std::map<uint32_t, std::vector<v1::Op>> ops;
};

// Reads `path` and keeps the ops of `ranks` (every rank asked for gets an entry, possibly empty).
// Only the asked ranks' ops are held in memory. A rank outside the job, or ops of a rank out of
// index order, is an error naming the file.
Result<RankPrograms> read_rank_programs(const std::string& path, const std::set<uint32_t>& ranks);

}  // namespace collide::traces
