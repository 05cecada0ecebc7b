#pragma once

#include <string>
#include <vector>

#include "traces/import/importer.h"

// Importing PyTorch profiler (Kineto) Chrome traces as a collide trace: one JSON file per rank
// (or several; a directory of them), each with distributedInfo.rank and traceEvents. Events whose
// args name a collective ("Collective name", "In msg nelems", "Out msg nelems", "dtype",
// "Group size", "Process Group Name", "Process Group Ranks", "Seq") become ops: the CPU-side
// record_param_comms event and the NCCL kernel event of one collective (same process group and
// Seq) make one op, issued at the earlier event's ts and lasting the kernel's dur (the CPU
// event's when no kernel event carries the args). Process groups become communicators.
// For send/recv, the args' "Rank" is the peer's rank in the group (PyTorch records the
// destination or source there).
namespace collide::traces::kineto {

Result<ImportReport> import_kineto(const std::vector<std::string>& inputs,
                                   const std::string& output, const ImportOptions& options);

}  // namespace collide::traces::kineto
