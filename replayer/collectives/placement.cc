#include "replayer/collectives/placement.h"

#include <algorithm>

#include <fmt/format.h>

namespace collide::replayer::collectives {

Result<Placement> Placement::uniform(uint32_t world_size, uint32_t ranks_per_host,
                                     uint32_t nics_per_host) {
  if (world_size == 0 || ranks_per_host == 0 || nics_per_host == 0) {
    return invalid_argument(fmt::format(
        "placement needs ranks, ranks per host and NICs per host (got {}, {}, {})", world_size,
        ranks_per_host, nics_per_host));
  }
  Placement p;
  p.host_of_rank.resize(world_size);
  p.nic_of_rank.resize(world_size);
  for (uint32_t r = 0; r < world_size; ++r) {
    p.host_of_rank[r] = r / ranks_per_host;
    p.nic_of_rank[r] = (r % ranks_per_host) % nics_per_host;
  }
  return p;
}

uint32_t Placement::host_count() const {
  if (host_of_rank.empty()) return 0;
  return *std::max_element(host_of_rank.begin(), host_of_rank.end()) + 1;
}

uint32_t Placement::nics_per_host() const {
  uint32_t nics = 1;
  for (uint32_t nic : nic_of_rank) nics = std::max(nics, nic + 1);
  return nics;
}

}  // namespace collide::replayer::collectives
