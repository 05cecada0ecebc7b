#include "replayer/collectives/ring_order.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

namespace collide::replayer::collectives {

Result<std::vector<uint32_t>> ring_order(const v1::Communicator& comm, const Placement& placement,
                                         uint32_t channel, RingOrder ring) {
  const auto n = static_cast<uint32_t>(comm.ranks_size());
  for (uint32_t global : comm.ranks()) {
    if (global >= placement.world_size()) {
      return invalid_argument(fmt::format("communicator {} has rank {}, beyond the placement's {}",
                                          comm.id(), global, placement.world_size()));
    }
  }
  std::vector<uint32_t> order;
  order.reserve(n);
  if (comm.rings_size() > 0) {
    const v1::RingOrder& ring = comm.rings(static_cast<int>(channel % comm.rings_size()));
    std::vector<bool> seen(n, false);
    for (uint32_t comm_rank : ring.ranks()) {
      if (comm_rank >= n || seen[comm_rank]) {
        return invalid_argument(fmt::format(
            "ring {} of communicator {} is not an order of its {} ranks", ring.channel(),
            comm.id(), n));
      }
      seen[comm_rank] = true;
      order.push_back(comm.ranks(static_cast<int>(comm_rank)));
    }
    if (order.size() != n) {
      return invalid_argument(fmt::format("ring {} of communicator {} lists {} of its {} ranks",
                                          ring.channel(), comm.id(), order.size(), n));
    }
    return order;
  }
  if (ring == RingOrder::kTopology && placement.leaf_of_host.size() < placement.host_count()) {
    return invalid_argument(fmt::format(
        "a topology-aware ring order needs the leaf of every host ({} hosts, {} leaves known)",
        placement.host_count(), placement.leaf_of_host.size()));
  }
  order.assign(comm.ranks().begin(), comm.ranks().end());
  // Channel c enters every host on rail c (mod the NICs): each host's ranks in NIC order starting
  // at that rail, so the channels between them spread over all the rails, as NCCL's rings on a
  // rail-optimised fabric do (with PXN, the hop between hosts then leaves on the rail it enters).
  uint32_t nics = 1;
  for (uint32_t global : order) nics = std::max(nics, placement.nic_of_rank[global] + 1);
  const uint32_t first_rail = channel % nics;
  const auto rail_slot = [&](uint32_t global) {
    return (placement.nic_of_rank[global] + nics - first_rail) % nics;
  };
  // Topology: a leaf's place is that of its first host in rank order, so the ring still starts
  // where rank order does and only the hosts of later leaves move forward to join their leaf.
  const auto leaf_of = [&](uint32_t global) {
    return placement.leaf_of_host[placement.host_of_rank[global]];
  };
  std::unordered_map<uint32_t, uint32_t> first_host_of_leaf;  // in this communicator
  if (ring == RingOrder::kTopology) {
    for (uint32_t global : order) {
      auto [it, added] = first_host_of_leaf.emplace(leaf_of(global), placement.host_of_rank[global]);
      if (!added) it->second = std::min(it->second, placement.host_of_rank[global]);
    }
  }
  const auto leaf_slot = [&](uint32_t global) {
    return ring == RingOrder::kTopology ? first_host_of_leaf.at(leaf_of(global)) : 0;
  };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::make_tuple(leaf_slot(a), placement.host_of_rank[a], rail_slot(a), a) <
           std::make_tuple(leaf_slot(b), placement.host_of_rank[b], rail_slot(b), b);
  });
  return order;
}

}  // namespace collide::replayer::collectives
