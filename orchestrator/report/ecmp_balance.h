#pragma once

#include <cstdint>
#include <vector>

#include "orchestrator/report/run_result.h"

// How evenly a virtual fabric's equal-cost links shared the traffic, per tier, from the bytes its
// switch ports counted: the KPIs of the IETF BMWG AI-fabric benchmarking draft. The ECMP max/mean
// ratio is the busiest link's bytes over the mean of its tier (1: even; 2 with two links: one link
// carried everything); Jain's fairness index is (sum x)^2 / (n sum x^2) (1: even; 1/n: one link).
//
// Tiers: leaf uplinks (each leaf -> spine link, as the leaf sent) and spine downlinks (each spine
// -> leaf link, as the spine sent); in a 3-tier fabric also spine uplinks (each spine ->
// super-spine link) and super-spine downlinks (each super-spine -> spine link). A tier's links are
// those of its ECMP groups (a leaf's uplinks; the downlinks of every spine towards one leaf; a
// spine's uplinks; the downlinks of every super-spine into one pod) that carried traffic: a group whose bytes are
// under 1% of the tier's joins in with none of its links, so a leaf with no inter-leaf traffic
// (whose uplinks see only ARP) does not pass for an idle path; an idle link of a busy group counts.
namespace collide::orchestrator::report {

struct LinkBalance {
  uint32_t links = 0;        // links that took part; 0: the tier carried nothing
  uint64_t max_bytes = 0;
  double mean_bytes = 0;
  double max_mean = 0;       // ECMP max/mean ratio; 0 when no link took part
  double jain = 0;           // Jain's fairness index; 0 when no link took part
};

struct EcmpBalance {
  LinkBalance leaf_uplinks;
  LinkBalance spine_downlinks;
  LinkBalance spine_uplinks;    // 3-tier
  LinkBalance super_downlinks;  // 3-tier
  bool empty() const {
    return leaf_uplinks.links == 0 && spine_downlinks.links == 0 && spine_uplinks.links == 0 &&
           super_downlinks.links == 0;
  }
};

// Max/mean and Jain over `bytes`, one value per link.
LinkBalance balance_of(const std::vector<uint64_t>& bytes);

// Every tier over one run's links (a virtual testbed's FabricLinks; host links are ignored).
EcmpBalance ecmp_balance(const std::vector<FabricLink>& links);

// The mean of each KPI over runs that carried traffic (a variant's repetitions), fed one run at a
// time.
class EcmpMean {
 public:
  void add(const EcmpBalance& run);
  EcmpBalance mean() const;

 private:
  EcmpBalance sum_;  // links and max_bytes: the largest; the rest summed
  // Runs that carried traffic on each tier.
  uint32_t leaf_runs_ = 0, spine_runs_ = 0, spine_up_runs_ = 0, super_runs_ = 0;
};

}  // namespace collide::orchestrator::report
