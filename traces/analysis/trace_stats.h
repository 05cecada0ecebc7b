#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "traces/analysis/hang_frontier.h"

// Statistics of a collide trace, computed in one streaming pass: op counts, bytes as issued and
// the traffic under the two models of traffic_model.h, per op kind, per communicator, per
// iteration and for the job. Memory grows with communicators, their members and iterations,
// never with the number of ops.
namespace collide::traces::analysis {

struct TrafficTotals {
  uint64_t issued_ops = 0;       // op records: each rank's issue of a collective counts once
  uint64_t instances = 0;        // collectives once per communicator instance; p2p: each send
  uint64_t issued_bytes = 0;     // sum of Op.bytes over the op records
  uint64_t full_mesh_bytes = 0;  // traffic under the full-mesh model
  uint64_t nccl_bytes = 0;       // traffic NCCL's algorithms put on the wire

  void add(const TrafficTotals& other);
};

struct CommunicatorStats {
  std::string id;
  std::string name;
  uint32_t size = 0;
  TrafficTotals totals;
};

struct TraceStats {
  uint32_t world_size = 0;
  std::map<v1::OpKind, TrafficTotals> by_kind;
  std::vector<CommunicatorStats> by_communicator;  // in header order
  std::map<uint32_t, TrafficTotals> by_iteration;  // Op.iteration (0 where the source has none)
  TrafficTotals job;
  // Op records naming a communicator the header does not declare, or issued by a rank outside
  // it: counted as issued, but without the communicator their traffic cannot be known (sends
  // still count their bytes). `collide trace validate` says which they are.
  uint64_t ops_unaccounted = 0;
  bool overflowed = false;  // a byte total passed 2^64 - 1 and was held there
  // Where the job stopped, for traces whose ops carry a state (Flight Recorder dumps).
  HangFrontier frontier;
};

// Traffic of a whole epoch of `minibatches` mini-batches, assuming each is like the mean of the
// iterations in the trace (job total / iterations x minibatches). In bytes, as doubles: an epoch
// of a large job can pass 2^64.
struct EpochTotals {
  uint64_t minibatches = 0;
  uint64_t iterations_in_trace = 0;
  double issued_bytes = 0;
  double full_mesh_bytes = 0;
  double nccl_bytes = 0;
};
EpochTotals project_to_epoch(const TraceStats& stats, uint64_t minibatches);

// Feeds ops one at a time; finish() gives the statistics.
class StatsAccumulator {
 public:
  explicit StatsAccumulator(const v1::TraceHeader& header);
  StatsAccumulator(StatsAccumulator&&) = default;
  void add(const v1::Op& op);
  TraceStats finish() &&;

 private:
  struct CommState {
    std::unordered_map<uint32_t, uint32_t> comm_rank;  // global rank -> comm rank
    std::vector<uint64_t> issued_collectives;          // per comm rank
    uint64_t instances = 0;                            // max of issued_collectives
  };
  TraceStats stats_;
  std::unordered_map<std::string, uint32_t> comm_index_;
  std::vector<CommState> comms_;
  HangFrontierAccumulator frontier_;
};

// Reads `path` once and computes its statistics. `progress` (may be empty) is called every 2^16
// ops with the number read so far. A file that cannot be read is an error naming it.
Result<TraceStats> compute_trace_stats(const std::string& path,
                                       const std::function<void(uint64_t ops)>& progress = {});

}  // namespace collide::traces::analysis
