#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"

namespace collide::orchestrator {

// What the report needs of each op that the agents' completion records do not carry: its
// datatype, reduction, training iteration, communicator size and, where the trace measured it in
// production, its time there; read once from the trace the run replays. Kept small per op (a
// run's trace may hold millions).
class OpCatalog {
 public:
  struct Entry {
    v1::DataType datatype = v1::DATA_TYPE_UNSPECIFIED;
    v1::ReduceOp reduce_op = v1::REDUCE_OP_UNSPECIFIED;
    uint32_t iteration = 0;
    uint32_t comm_size = 0;
    uint64_t production_ns = 0;  // Op.measured_duration_ns, 0 when the trace has none
  };

  // Reads the trace at `path`; an unreadable or damaged trace is an error naming it.
  static Result<OpCatalog> read(const std::string& path);

  // The op `index` of global rank `rank`, or nullptr if the trace has no such op.
  const Entry* find(uint32_t rank, uint64_t index) const;

 private:
  std::unordered_map<uint32_t, std::vector<Entry>> ops_of_rank_;
};

}  // namespace collide::orchestrator
