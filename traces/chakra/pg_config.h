#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/et_def.pb.h"
#include "common/result.h"

// The process groups a PyTorch execution trace records. PyTorch's execution-trace observer writes
// one node named "## process_group:init ##" whose single input is a JSON list, one object per
// process group: {"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
// "ranks": [...], "group_size": 8, "group_count": 67}. "ranks" lists global ranks; it is empty for
// the default group, which spans the world ("group_size" ranks). Chakra's PyTorch converter keeps
// the node (as a METADATA_NODE since 2024, a COMP_NODE before) with inputs.values set to Python's
// str() of the input list, i.e. the JSON text inside ['...'].
namespace collide::traces::chakra {

struct PgConfigEntry {
  std::string name;             // pg_name, as COMM nodes' pg_name attribute gives it
  std::string desc;             // pg_desc ("default_pg", ...); may be empty
  std::vector<uint32_t> ranks;  // global ranks; empty: the whole world
  uint32_t group_size = 0;      // 0 when not recorded
};

struct PgConfig {
  std::vector<PgConfigEntry> groups;
  // The world the groups imply: the default group's size, or one past the highest rank named.
  uint32_t world_size() const;
  const PgConfigEntry* find(std::string_view name) const;
};

// Whether `node` is the process-group record.
bool is_pg_config_node(const ChakraProtoMsg::Node& node);

// Parses the node's inputs.values; errors say what was wrong (the caller names file and record).
Result<PgConfig> parse_pg_config(std::string_view values);

}  // namespace collide::traces::chakra
