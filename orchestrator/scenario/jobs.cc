#include "orchestrator/scenario/jobs.h"

namespace collide::orchestrator {

std::string alone_variant(const std::string& job) { return std::string(kAlonePrefix) + job; }

std::vector<uint32_t> job_global_ranks(const v1::Job& job, uint32_t ranks_per_host) {
  std::vector<uint32_t> ranks;
  for (uint32_t host : job.hosts()) {
    for (uint32_t local = 0; local < ranks_per_host; ++local) ranks.push_back(host * ranks_per_host + local);
  }
  return ranks;
}

}  // namespace collide::orchestrator
