#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"

namespace collide::replayer::collectives {

// Where each global rank runs: its host and the NIC (rail) it uses there.
struct Placement {
  std::vector<uint32_t> host_of_rank;
  std::vector<uint32_t> nic_of_rank;
  // The leaf switch each host hangs under (with rails: its rail group), by host; empty when not
  // known. Only a topology-aware ring order (RingOrder::kTopology) reads it.
  std::vector<uint32_t> leaf_of_host;

  // `ranks_per_host` consecutive ranks per host, rank i on NIC i % nics_per_host (rail-aligned).
  static Result<Placement> uniform(uint32_t world_size, uint32_t ranks_per_host,
                                   uint32_t nics_per_host);

  uint32_t world_size() const { return static_cast<uint32_t>(host_of_rank.size()); }
  uint32_t host_count() const;
  // The NICs the job's ranks use on a host (the highest NIC index + 1): rails of a uniform job.
  uint32_t nics_per_host() const;
  bool same_host(uint32_t a, uint32_t b) const { return host_of_rank[a] == host_of_rank[b]; }
};

}  // namespace collide::replayer::collectives
