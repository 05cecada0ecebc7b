#include "orchestrator/report/ecmp_balance.h"

#include <algorithm>
#include <map>

namespace collide::orchestrator::report {
namespace {

// A group under this share of its tier's bytes carried only background frames (ARP).
constexpr double kBusyGroupShare = 0.01;

// `bytes` of each link, by ECMP group: the links of groups that carried traffic.
LinkBalance tier_balance(const std::map<uint32_t, std::vector<uint64_t>>& groups) {
  uint64_t total = 0;
  for (const auto& [group, bytes] : groups) {
    for (uint64_t b : bytes) total += b;
  }
  std::vector<uint64_t> busy;
  for (const auto& [group, bytes] : groups) {
    uint64_t sum = 0;
    for (uint64_t b : bytes) sum += b;
    if (total == 0 || static_cast<double>(sum) < kBusyGroupShare * static_cast<double>(total)) {
      continue;
    }
    busy.insert(busy.end(), bytes.begin(), bytes.end());
  }
  return balance_of(busy);
}

}  // namespace

LinkBalance balance_of(const std::vector<uint64_t>& bytes) {
  LinkBalance b;
  double sum = 0, sum_squares = 0;
  for (uint64_t x : bytes) {
    const double v = static_cast<double>(x);
    sum += v;
    sum_squares += v * v;
    b.max_bytes = std::max(b.max_bytes, x);
  }
  if (bytes.empty() || sum == 0) return b;
  b.links = static_cast<uint32_t>(bytes.size());
  b.mean_bytes = sum / static_cast<double>(bytes.size());
  b.max_mean = static_cast<double>(b.max_bytes) / b.mean_bytes;
  b.jain = sum * sum / (static_cast<double>(bytes.size()) * sum_squares);
  return b;
}

EcmpBalance ecmp_balance(const std::vector<FabricLink>& links) {
  std::map<uint32_t, std::vector<uint64_t>> uplinks_of_leaf, downlinks_to_leaf, uplinks_of_spine, downlinks_to_pod;
  for (const FabricLink& l : links) {
    if (l.host_link) continue;
    if (l.spine_link) {
      uplinks_of_spine[l.spine].push_back(l.lower_end.tx_bytes);
      downlinks_to_pod[l.pod].push_back(l.upper_end.tx_bytes);
      continue;
    }
    uplinks_of_leaf[l.leaf].push_back(l.lower_end.tx_bytes);
    downlinks_to_leaf[l.leaf].push_back(l.upper_end.tx_bytes);
  }
  return {tier_balance(uplinks_of_leaf), tier_balance(downlinks_to_leaf), tier_balance(uplinks_of_spine),
          tier_balance(downlinks_to_pod)};
}

void EcmpMean::add(const EcmpBalance& run) {
  const auto add_tier = [&](LinkBalance EcmpBalance::*tier, uint32_t& n) {
    const LinkBalance& b = run.*tier;
    if (b.links == 0) return;
    LinkBalance& m = sum_.*tier;
    ++n;
    m.links = std::max(m.links, b.links);
    m.max_bytes = std::max(m.max_bytes, b.max_bytes);
    m.mean_bytes += b.mean_bytes;
    m.max_mean += b.max_mean;
    m.jain += b.jain;
  };
  add_tier(&EcmpBalance::leaf_uplinks, leaf_runs_);
  add_tier(&EcmpBalance::spine_downlinks, spine_runs_);
  add_tier(&EcmpBalance::spine_uplinks, spine_up_runs_);
  add_tier(&EcmpBalance::super_downlinks, super_runs_);
}

EcmpBalance EcmpMean::mean() const {
  EcmpBalance mean = sum_;
  const auto divide = [&](LinkBalance EcmpBalance::*tier, uint32_t n) {
    if (n == 0) return;
    LinkBalance& m = mean.*tier;
    m.mean_bytes /= n;
    m.max_mean /= n;
    m.jain /= n;
  };
  divide(&EcmpBalance::leaf_uplinks, leaf_runs_);
  divide(&EcmpBalance::spine_downlinks, spine_runs_);
  divide(&EcmpBalance::spine_uplinks, spine_up_runs_);
  divide(&EcmpBalance::super_downlinks, super_runs_);
  return mean;
}

}  // namespace collide::orchestrator::report
