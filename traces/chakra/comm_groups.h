#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

// The comm-group JSON that goes with Chakra traces: which global ranks make up each process group.
// Accepted forms:
//   {"<pg_name or pg id>": [ranks...], ...}                  (ASTRA-sim, Chakra tools)
//   {"<pg id>": {"pg_name": "...", "ranks": [...]}, ...}     (the pg id keys the object)
//   [{"pg_name": "...", "ranks": [...]}, ...]                (PyTorch's pg_config list)
// In the keyed forms the key is the name node attributes refer to (pg_name).
namespace collide::traces::chakra {

struct CommGroup {
  std::string name;
  std::vector<uint32_t> ranks;  // global ranks, in group-rank order
};

// Parses `text`; errors name `source` and the line.
Result<std::vector<CommGroup>> parse_comm_groups(std::string_view text, const std::string& source);
Result<std::vector<CommGroup>> read_comm_groups(const std::string& path);
// Writes the first form, groups in the order given.
Status write_comm_groups(const std::string& path, const std::vector<CommGroup>& groups);

}  // namespace collide::traces::chakra
