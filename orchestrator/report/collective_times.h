#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/report/run_result.h"

namespace collide::orchestrator::report {

// One collective as the job saw it: all ranks of its communicator took part, and it was done
// when the last of them finished. The k-th collective of a communicator is the same one on every
// rank.
struct CollectiveTime {
  std::string comm;
  uint64_t sequence = 0;  // k: its position among the communicator's collectives
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  uint32_t comm_size = 0;
  uint64_t bytes = 0;
  v1::DataType datatype = v1::DATA_TYPE_UNSPECIFIED;
  v1::ReduceOp reduce_op = v1::REDUCE_OP_UNSPECIFIED;
  uint32_t iteration = 0;
  uint64_t start_ns = 0;  // the first rank's start
  uint64_t end_ns = 0;    // the last rank's end
  uint32_t ranks_seen = 0;
  bool failed = false;
  // Its time in production: the longest of its ranks' measured times (each rank's op lasts until
  // the collective is done for it, so the slowest rank's is the collective's), 0 if none measured.
  uint64_t production_ns = 0;

  double seconds() const { return static_cast<double>(end_ns - start_ns) / 1e9; }
};

std::vector<CollectiveTime> collective_times(const RunResult& run);

// The run's fault windows that held while its ops ran, counted from its first op (a run without
// ops keeps them as measured). Left out: a window that never opened (its start came after the
// run) or opened only after the last op (a recurring fault's later occurrences, armed ahead).
std::vector<FaultWindow> held_fault_windows(const RunResult& run);

// Job completion time of the run, and of each iteration (index = iteration number).
uint64_t job_completion_ns(const RunResult& run);
std::vector<uint64_t> iteration_completion_ns(const RunResult& run);

}  // namespace collide::orchestrator::report
