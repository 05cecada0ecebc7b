#pragma once

#include <string>
#include <vector>

#include "traces/import/importer.h"

// `collide trace import --format chakra`: Chakra execution traces, one `<prefix>.<rank>.et` file
// per rank, plus an optional comm-group JSON (see comm_groups.h). Inputs are .et files, .json
// files, or directories holding them. A process group with no known members is a communicator of
// every rank; nodes without a pg_name use the communicator "world" of every rank. How nodes become
// ops is described in rank_converter.h. The number of ranks is the highest rank file's, raised to
// the world the trace's own process-group record implies (pg_config.h) or ImportOptions::world_size;
// the record also gives the members of the process groups the comm-group file does not.
namespace collide::traces::chakra {

Result<ImportReport> import_chakra(const std::vector<std::string>& inputs,
                                   const std::string& output, const ImportOptions& options);

// The metadata key that keeps GlobalMetadata.version.
inline constexpr const char* kVersionKey = "chakra.version";

}  // namespace collide::traces::chakra
