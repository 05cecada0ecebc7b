#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collide/trace.pb.h"
#include "orchestrator/report/collective_times.h"

// What report.json keeps of one repetition's collectives for `collide compare`: their completion
// times per kind and size, all of them up to a cap, a reproducible uniform sample beyond it.
namespace collide::orchestrator::report {

// The most completion times kept per repetition, kind and size: enough for a p99 of a row to rest
// on ten times, few enough that a long run's report.json stays small.
inline constexpr size_t kCollectiveSampleCap = 1000;

struct CollectiveSamples {
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  uint64_t bytes = 0;  // nccl-tests' size S, as in SizeRow
  v1::DataType datatype = v1::DATA_TYPE_UNSPECIFIED;
  v1::ReduceOp reduce_op = v1::REDUCE_OP_UNSPECIFIED;
  uint64_t count = 0;          // completed collectives of this kind and size in the repetition
  std::vector<double> times_us;  // all of them, or a uniform sample of `cap` when count > cap
  bool sampled = false;
  size_t cap = kCollectiveSampleCap;
};

// The completed collectives of one repetition grouped like the size table. A row with more than
// `cap` keeps a reservoir sample of `cap`, seeded by the repetition, kind and size so the same run
// always writes the same report.
std::vector<CollectiveSamples> sample_collective_times(const std::vector<CollectiveTime>& collectives,
                                                       uint32_t repetition,
                                                       size_t cap = kCollectiveSampleCap);

}  // namespace collide::orchestrator::report
