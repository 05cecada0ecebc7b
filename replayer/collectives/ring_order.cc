#include "replayer/collectives/ring_order.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace collide::replayer::collectives {

Result<std::vector<uint32_t>> ring_order(const v1::Communicator& comm, const Placement& placement,
                                         uint32_t channel) {
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
  order.assign(comm.ranks().begin(), comm.ranks().end());
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(placement.host_of_rank[a], placement.nic_of_rank[a], a) <
           std::tie(placement.host_of_rank[b], placement.nic_of_rank[b], b);
  });
  return order;
}

}  // namespace collide::replayer::collectives
