#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

// Writes a collide trace as Chakra execution traces: `<prefix>.<rank>.et` for every rank of the
// world and `<prefix>.comm_groups.json` with every communicator (pg_name = Communicator.id).
// Per op, in the rank's order:
// - compute_before_ns becomes a COMP node (duration in whole microseconds) just before the op;
// - the op becomes a COMM_COLL node (comm_type, comm_size = bytes, pg_name, `root` for rooted
//   kinds) or a COMM_SEND / COMM_RECV node (comm_src, comm_dst as global ranks, comm_tag counting
//   the sends from one rank to another so the n-th send meets the n-th receive);
// - each node has a ctrl_dep on the node before it, so tools that schedule by dependencies keep
//   the rank's order; Op.deps become data_deps; enqueue_time_ns becomes start_time_micros; the
//   label becomes the node name.
// What Chakra cannot carry is dropped: count and datatype (only bytes), reduce_op, all-to-allv's
// per-peer sizes (exported as all-to-all), op_count, group, iteration, rank hosts, rings, trees,
// communicator names other than the id, times below a microsecond.
namespace collide::traces::chakra {

struct ExportReport {
  uint64_t ops = 0;
  uint32_t files = 0;  // .et files written
  std::string comm_groups_path;
  uint64_t notes_total = 0;
  std::vector<std::string> notes;  // the first 100 things that could not be carried exactly
};

Result<ExportReport> export_chakra(const std::string& trace_path, const std::string& prefix);

// The Chakra schema version written into GlobalMetadata when the trace does not name one.
inline constexpr const char* kExportVersion = "0.0.4";

}  // namespace collide::traces::chakra
