#pragma once

#include <functional>
#include <string>
#include <vector>

#include "traces/import/importer.h"
#include "traces/nccl/nccl_log_parser.h"

namespace collide::traces::nccl {

// `collide trace import --format nccl`: NCCL (or RCCL) debug logs, one file per process or merged
// streams, to a collide trace. Files are mapped and cut into pieces parsed in parallel; records
// are resolved in input order (see nccl_log_parser.h and nccl_trace_builder.h for the rules).
//
// Ops are kept, packed, until every init line is read, then written. When writing to a file and
// not in strict mode (where a problem must leave nothing written), two ways start writing sooner:
// - One log file whose init lines stop coming (the usual case: a job creates its communicators
//   first) is written as it is read, once two 16 MiB pieces in a row brought none; an init line
//   after that makes it start over the usual way.
// - Logs of several GB (whose ops would take GBs even packed) are streamed: a first pass reads
//   the init lines, which decide the header, and a second writes the collectives as it resolves
//   them, so memory stays bounded whatever the log's size. It reads the text twice.
// All write the same bytes.
Result<ImportReport> import_nccl_logs(const std::vector<std::string>& inputs,
                                      const std::string& output, const ImportOptions& options);

// The same, streamed whatever the size (where it can be): for tests and benchmarks. If the
// second pass meets init lines the first did not give the same layout (which the two passes'
// parsing is built to rule out), the ops written are not trusted and the import starts over
// stored. `alter_first_pass`, for tests of that, changes each piece the first pass parsed.
Result<ImportReport> import_nccl_logs_streamed(
    const std::vector<std::string>& inputs, const std::string& output, const ImportOptions& options,
    const std::function<void(ParsedLog&)>& alter_first_pass = nullptr);

}  // namespace collide::traces::nccl
