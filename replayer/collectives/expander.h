#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/collectives/placement.h"
#include "replayer/collectives/step.h"

namespace collide::replayer::collectives {

enum class AllReduceAlgorithm { kRing, kTree };

struct ExpandOptions {
  AllReduceAlgorithm all_reduce = AllReduceAlgorithm::kRing;
  uint32_t channels = 2;               // NCCL channels; the buffer is split across them
  uint64_t slice_bytes = 512 * 1024;   // pipelining granularity (NCCL's chunk size)
  uint32_t qps_per_connection = 1;     // NCCL_IB_QPS_PER_CONNECTION: ECMP entropy per connection
  // Bandwidth of transfers inside a host (NVLink), which take a modeled time instead of the
  // network. 300 GB/s is about what one H100 moves in one direction over NVLink 4 in practice.
  double local_gbytes_per_s = 300.0;
};

Status validate(const ExpandOptions& options);

// Expands each rank's ops into steps. Deterministic and per rank: an agent expands only the ranks
// it hosts, and anyone holding the same header, placement and options gets the same steps. Ops of
// one rank must be given in that rank's order (it numbers them to match peers' transfers).
class Expander {
 public:
  static Result<Expander> create(const v1::TraceHeader& header, Placement placement,
                                 ExpandOptions options);

  Result<ExpandedOp> expand(const v1::Op& op);

  const Placement& placement() const { return placement_; }
  const ExpandOptions& options() const { return options_; }

 private:
  Expander() = default;
  uint64_t next_sequence(const v1::Op& op, uint32_t peer);

  // Ring/topology order of a communicator on a channel, computed once.
  Result<const std::vector<uint32_t>*> order_of(const v1::Communicator& comm, uint32_t channel);

  Placement placement_;
  ExpandOptions options_;
  std::unordered_map<std::string, v1::Communicator> comms_;
  v1::TraceHeader sources_;  // only the header's source_files, which ops' source lines refer to
  // Communicators whose ranks all sit on one host: nothing of theirs reaches the network, their
  // transfers take a modeled time, so they are not cut into slices.
  std::unordered_map<std::string, bool> host_local_;
  std::map<std::pair<std::string, uint32_t>, std::vector<uint32_t>> orders_;
  // Per rank: collectives issued on each communicator; sends/recvs per (comm, peer, direction).
  std::map<std::pair<uint32_t, std::string>, uint64_t> collective_seq_;
  std::map<std::tuple<uint32_t, std::string, uint32_t, int>, uint64_t> p2p_seq_;
};

}  // namespace collide::replayer::collectives
