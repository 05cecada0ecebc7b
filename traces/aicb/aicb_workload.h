#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "traces/import/importer.h"

// The AICB / SimAI workload text file, parsed (expansion into ops is aicb_expand.h):
//   line 1: the policy (HYBRID_TRANSFORMER_FWD_IN_BCKWD, MICRO, ...) then `key: value` pairs:
//           model_parallel_NPU_group (TP), ep, pp, vpp, ga, all_gpus, pp_comm (bytes), ...
//   line 2: the number of layer lines
//   then one line per layer, 12 columns separated by tabs or spaces:
//     name -1 fwd_compute fwd_comm_type fwd_comm_bytes ig_compute ig_comm_type ig_comm_bytes
//     wg_compute wg_comm_type wg_comm_bytes update_time
// Compute columns are nanoseconds: AICB's AIOB profiles kernels with CUDA events (milliseconds),
// writes them times 1000 (microseconds) in its aiob_outputs files, and multiplies by 1000 again
// when it writes the SimAI workload (extract_averages in AICB's utils/utils.py). Files made
// without AIOB carry a placeholder compute time of 1.
namespace collide::traces::aicb {

enum class Group { kDefault, kTp, kDp, kEp, kDpEp };

struct Comm {
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;  // UNSPECIFIED: NONE, no communication
  Group group = Group::kDefault;              // kDefault: TP in fwd/ig columns, DP in wg
  uint64_t bytes = 0;                         // as the file gives it (the whole buffer)
};

struct Layer {
  std::string name;
  uint32_t line = 0;
  uint64_t fwd_compute = 0, ig_compute = 0, wg_compute = 0;  // nanoseconds
  Comm fwd, ig, wg;
  uint64_t update_time = 0;
};

struct Workload {
  std::string file;
  std::string policy;
  std::map<std::string, std::string> params;  // every key: value pair of line 1, as written
  uint32_t tp = 1, ep = 1, pp = 1, vpp = 1, ga = 1;
  uint32_t all_gpus = 0;  // 0 when line 1 does not say
  uint64_t pp_comm = 0;   // bytes between pipeline stages per pass
  std::vector<Layer> layers;
  uint64_t lines_read = 0;
};

// Parses `text` (named `file` in messages). Structural errors (line 1 or 2 unreadable) are errors;
// a bad layer line is a problem in `report` naming file:line, or an error when options.strict.
Result<Workload> parse_workload(std::string_view text, const std::string& file,
                                const ImportOptions& options, ImportReport& report);

// Parses a comm type column: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, BROADCAST, each
// optionally suffixed _EP, _DP_EP (also _TP, _DP).
Result<Comm> parse_comm_type(std::string_view text);

std::string_view group_name(Group group);

// Counts a problem in `report` and keeps its text while there is room (ImportReport's rule; kept
// here so this library does not depend on the import table that depends on it).
void record_problem(ImportReport& report, const ImportOptions& options, std::string where,
                    std::string what);

}  // namespace collide::traces::aicb
