#pragma once

#include <cstdint>
#include <vector>

#include "collide/trace.pb.h"
#include "replayer/collectives/placement.h"

namespace collide::replayer::collectives {

// NCCL's PXN (PCI x NVLink, NCCL_PXN_DISABLE=0, the default since 2.12): a transfer from a rank
// to a rank on another host and another NIC (rail) first moves over NVLink to the sender's
// host-mate on the receiver's rail, whose NIC sends it on, so inter-host traffic stays on rails.
// This table picks that relay for one communicator: it must be a member, and where several
// members share the rail, the lowest rank serves.
class PxnRelays {
 public:
  static constexpr int64_t kDirect = -1;

  PxnRelays(const v1::Communicator& comm, const Placement& placement);

  // The rank that relays a transfer from `from` to `to`, or kDirect.
  int64_t relay_of(const Placement& placement, uint32_t from, uint32_t to) const {
    if (placement.host_of_rank[from] == placement.host_of_rank[to]) return kDirect;
    const uint32_t rail = placement.nic_of_rank[to];
    if (placement.nic_of_rank[from] == rail) return kDirect;
    return rail_member_[size_t{placement.host_of_rank[from]} * nics_ + rail];
  }
  // The communicator's members on `host`, in rank order.
  const std::vector<uint32_t>& members_on(uint32_t host) const { return members_by_host_[host]; }

 private:
  uint32_t nics_ = 0;
  std::vector<int64_t> rail_member_;  // by host * nics_ + NIC: the relay there, or kDirect
  std::vector<std::vector<uint32_t>> members_by_host_;
};

// Each rank's index among the ranks of its host (in rank order): how a relayed transfer names
// its origin on the network hop (FlowTag::relay_from), where a global rank would not fit.
std::vector<uint32_t> index_on_host(const Placement& placement);

}  // namespace collide::replayer::collectives
