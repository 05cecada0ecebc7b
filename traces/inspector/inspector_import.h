#pragma once

#include <string>
#include <vector>

#include "traces/import/importer.h"

// Importing NCCL Inspector output (the NCCL profiler plugin in NVIDIA/nccl ext-profiler/inspector)
// as a collide trace. The plugin writes one file per process (<host>-pid<pid>.log) of JSON
// objects, one a line: header {id: communicator hash, rank: rank in it, n_ranks, nnodes},
// metadata {hostname, pid, dump_timestamp_us, ...} and coll_perf {coll, coll_sn,
// coll_msg_size_bytes, coll_exec_time_us, ...}. Of a directory, the .log files are read.
//
// A process's global rank is its rank in the largest communicator (the world); the members of the
// others are found from which process reported which rank of them. coll_msg_size_bytes is
// NCCL's count times the element size, so it is the op's bytes; the element type is not given,
// so ops count bytes (uint8). coll_exec_time_us becomes each op's measured duration.
//
// The plugin writes, per communicator and dump interval, the last collective that completed: the
// records are samples of the job's collectives (coll_sn shows the gaps), not every one.
namespace collide::traces::inspector {

Result<ImportReport> import_nccl_inspector(const std::vector<std::string>& inputs,
                                           const std::string& output,
                                           const ImportOptions& options);

}  // namespace collide::traces::inspector
