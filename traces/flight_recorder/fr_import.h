#pragma once

#include <string>
#include <vector>

#include "traces/import/importer.h"

// Importing PyTorch NCCL Flight Recorder dumps (one file per rank, pickle or JSON; a directory
// of them) as a collide trace: each rank's entries become its ops in record order, process
// groups (pg_config) become communicators, sizes come from the tensors' shapes and types, and
// each op keeps its state (scheduled, started, completed), its creation time and its measured
// duration, so `collide trace stats` and `validate` can name a hang's frontier.
//
// A dump holds the last entries of a ring buffer, so ranks' windows start at different
// collectives: per process group, collectives before the first one every dumped member still
// holds are left out, so that members' sequences line up. The rank of a dump is the number its
// file name ends in (PyTorch writes <prefix><rank>, e.g. nccl_trace_rank_3). Rooted
// collectives get root 0: no entry field records the root, and the import says so once. Ops
// issued inside a coalescing group take the state and duration of the group's `nccl:coalesced`
// entry (theirs stay "scheduled"). ImportOptions::stop_at_hang cuts the ops at the hang
// (stop_at_hang.h), and the header says where.
namespace collide::traces::flight_recorder {

Result<ImportReport> import_flight_recorder(const std::vector<std::string>& inputs,
                                            const std::string& output,
                                            const ImportOptions& options);

}  // namespace collide::traces::flight_recorder
