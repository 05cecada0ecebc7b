#pragma once

#include <string>
#include <vector>

#include "traces/import/importer.h"

// `collide trace import --format chakra`: Chakra execution traces, one `<prefix>.<rank>.et` file
// per rank, plus an optional comm-group JSON (see comm_groups.h). Inputs are .et files, .json
// files, or directories holding them. A process group with no known members is a communicator of
// every rank; nodes without a pg_name use the communicator "world" of every rank. How nodes become
// ops is described in rank_converter.h.
namespace collide::traces::chakra {

Result<ImportReport> import_chakra(const std::vector<std::string>& inputs,
                                   const std::string& output, const ImportOptions& options);

// The metadata key that keeps GlobalMetadata.version.
inline constexpr const char* kVersionKey = "chakra.version";

}  // namespace collide::traces::chakra
