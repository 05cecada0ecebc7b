#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/collectives/placement.h"
#include "replayer/collectives/pxn_relays.h"
#include "replayer/collectives/ring_order.h"
#include "replayer/collectives/step.h"

namespace collide::replayer::collectives {

class StepBuilder;
struct ChannelView;

enum class AllReduceAlgorithm { kRing, kTree };

struct ExpandOptions {
  AllReduceAlgorithm all_reduce = AllReduceAlgorithm::kRing;
  uint32_t channels = 2;               // NCCL channels; the buffer is split across them
  uint64_t slice_bytes = 512 * 1024;   // pipelining granularity (NCCL's chunk size)
  uint32_t qps_per_connection = 1;     // NCCL_IB_QPS_PER_CONNECTION: ECMP entropy per connection
  // Bandwidth of transfers inside a host (NVLink), which take a modeled time instead of the
  // network. 300 GB/s is about what one H100 moves in one direction over NVLink 4 in practice.
  double local_gbytes_per_s = 300.0;
  // NCCL's PXN (NCCL_PXN_DISABLE=0, NCCL's default): a collective's transfer to a rank on another
  // host and another NIC goes over NVLink to the sender's host-mate on the receiver's rail, which
  // sends it on from its NIC, so inter-host traffic stays on rails (pxn_relays.h). Off: it leaves
  // from the sender's own NIC and crosses rails (the spines of a rail-optimised fabric).
  // Sends/recvs and all-to-allv go direct either way: their relay has no op of its own that
  // names the transfer (a real proxy thread relays them, not the relay's stream).
  bool pxn = true;
  RingOrder ring_order = RingOrder::kRank;
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

  // Appends the steps of the rank at `view.pos` for one channel of `op`.
  Status append_channel(StepBuilder& builder, const v1::Op& op, const v1::Communicator& comm,
                        const ChannelView& view);
  // PXN on one channel, for the steps [first, end) just appended: this rank's sends to another
  // rail go to their relay, its receives from one come from the relay; then the steps this rank
  // relays for its host-mates (the NVLink receive, the network send that waits for it).
  Status relay_channel(StepBuilder& builder, ExpandedOp& out, const v1::Op& op,
                       const v1::Communicator& comm, const ChannelView& view, uint32_t first);
  const PxnRelays& relays_of(const v1::Communicator& comm);

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
  // PXN: relays per communicator (made on first use), each rank's index on its host, and the
  // expansion of a host-mate's channel this rank relays for (reused, so probing allocates once).
  std::unordered_map<std::string, PxnRelays> relays_;
  std::vector<uint32_t> index_on_host_;
  ExpandedOp probe_;
  // Per rank: collectives issued on each communicator; sends/recvs per (comm, peer, direction).
  std::map<std::pair<uint32_t, std::string>, uint64_t> collective_seq_;
  std::map<std::tuple<uint32_t, std::string, uint32_t, int>, uint64_t> p2p_seq_;
};

}  // namespace collide::replayer::collectives
