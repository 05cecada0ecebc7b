#include "orchestrator/scenario/jobs.h"

#include <algorithm>

#include "orchestrator/testbed/link_names.h"

namespace collide::orchestrator {

std::string alone_variant(const std::string& job) { return std::string(kAlonePrefix) + job; }

std::vector<uint32_t> job_global_ranks(const v1::Job& job, uint32_t ranks_per_host) {
  std::vector<uint32_t> ranks;
  for (uint32_t host : job.hosts()) {
    for (uint32_t local = 0; local < ranks_per_host; ++local) ranks.push_back(host * ranks_per_host + local);
  }
  return ranks;
}

std::vector<std::string> variants_faulting(const v1::Scenario& scenario, const v1::Job& job) {
  const auto acts_on_job = [&](const v1::Fault& f) {
    auto host = testbed::parse_host_link(f.link());
    if (!host.ok() || !host->has_value()) return true;  // a fabric link (or a name that did not read)
    return std::find(job.hosts().begin(), job.hosts().end(), (*host)->host) != job.hosts().end();
  };
  std::vector<std::string> variants;
  for (const v1::Variant& v : scenario.runs().variants()) {
    const bool faulting = std::any_of(v.faults().begin(), v.faults().end(), [&](const std::string& name) {
      return std::any_of(scenario.faults().begin(), scenario.faults().end(),
                         [&](const v1::Fault& f) { return f.name() == name && acts_on_job(f); });
    });
    if (faulting) variants.push_back(v.name());
  }
  return variants;
}

}  // namespace collide::orchestrator
