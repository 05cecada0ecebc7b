#pragma once

#include <string>
#include <vector>

#include "traces/nccl/nccl_log_parser.h"

// NCCL's algorithm and protocol choices (TUNING lines) as a hint in the trace header: for each
// collective, which algorithm/protocol NCCL chose over which range of sizes. Kept per
// (collective, algorithm, protocol) rather than per op: TUNING lines do not name their
// communicator or opCount (and from 2.24 only comm rank 0 prints them), so they cannot be joined
// to ops, and a header line is what a reader of the replay needs to compare like with like.
namespace collide::traces::nccl {

// Merges `from` into `into` (same collective, algorithm and protocol: one entry).
void merge_tunings(const std::vector<TuningRecord>& from, std::vector<TuningRecord>& into);

// Whether merging `from` into `known` would change it (a choice or a size range not yet seen).
bool extends_tunings(const std::vector<TuningRecord>& from, const std::vector<TuningRecord>& known);

// `all_reduce TREE/LL 4-65536 B; all_reduce RING/LL128 131072-4194304 B; ...`, ordered by
// collective, then smallest size; empty if there are none.
std::string format_tunings(const std::vector<TuningRecord>& tunings);

}  // namespace collide::traces::nccl
