#pragma once

#include <string>
#include <vector>

#include "traces/import/importer.h"

namespace collide::traces::nccl {

// `collide trace import --format nccl`: NCCL (or RCCL) debug logs, one file per process or merged
// streams, to a collide trace. Files are mapped and cut into pieces parsed in parallel; records
// are resolved in input order (see nccl_log_parser.h and nccl_trace_builder.h for the rules).
Result<ImportReport> import_nccl_logs(const std::vector<std::string>& inputs,
                                      const std::string& output, const ImportOptions& options);

}  // namespace collide::traces::nccl
