#include "replayer/collectives/pxn_relays.h"

#include <algorithm>

namespace collide::replayer::collectives {

PxnRelays::PxnRelays(const v1::Communicator& comm, const Placement& placement) {
  const uint32_t hosts = placement.host_count();
  nics_ = placement.nic_of_rank.empty()
              ? 1
              : *std::max_element(placement.nic_of_rank.begin(), placement.nic_of_rank.end()) + 1;
  rail_member_.assign(size_t{hosts} * nics_, kDirect);
  members_by_host_.resize(hosts);
  for (uint32_t r : comm.ranks()) members_by_host_[placement.host_of_rank[r]].push_back(r);
  for (std::vector<uint32_t>& members : members_by_host_) {
    std::sort(members.begin(), members.end());
    for (uint32_t r : members) {
      int64_t& slot = rail_member_[size_t{placement.host_of_rank[r]} * nics_ +
                                   placement.nic_of_rank[r]];
      if (slot == kDirect) slot = r;  // the lowest rank on the rail
    }
  }
}

std::vector<uint32_t> index_on_host(const Placement& placement) {
  std::vector<uint32_t> seen(placement.host_count(), 0);
  std::vector<uint32_t> index(placement.world_size());
  for (uint32_t r = 0; r < placement.world_size(); ++r) {
    index[r] = seen[placement.host_of_rank[r]]++;
  }
  return index;
}

}  // namespace collide::replayer::collectives
