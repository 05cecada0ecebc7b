#include "orchestrator/report/fabric_traffic.h"

#include <fmt/format.h>

namespace collide::orchestrator::report {
namespace {

SwitchTraffic& at(std::vector<SwitchTraffic>& v, uint32_t index, bool leaf) {
  if (v.size() <= index) v.resize(index + 1);
  SwitchTraffic& s = v[index];
  s.leaf = leaf;
  s.index = index;
  s.name = fmt::format("{}{}", leaf ? "leaf" : "spine", index);
  return s;
}

void add(SwitchTraffic& sum, const SwitchTraffic& more) {
  sum.bytes_from_below += more.bytes_from_below;
  sum.bytes_to_below += more.bytes_to_below;
  sum.bytes_from_above += more.bytes_from_above;
  sum.bytes_to_above += more.bytes_to_above;
  sum.host_ring_drops += more.host_ring_drops;
}

}  // namespace

uint64_t FabricTotals::spine_bytes() const {
  uint64_t sum = 0;
  for (const SwitchTraffic& s : spines) sum += s.bytes_from_below;
  return sum;
}

uint64_t FabricTotals::host_ring_drops() const {
  uint64_t sum = 0;
  for (const SwitchTraffic& s : leaves) sum += s.host_ring_drops;
  return sum;
}

FabricTotals fabric_totals(const std::vector<FabricLink>& links) {
  FabricTotals t;
  for (const FabricLink& l : links) {
    SwitchTraffic& leaf = at(t.leaves, l.leaf, true);
    leaf.rail = l.rail;
    if (l.host_link) {
      // The leaf's port is the link's upper end.
      leaf.bytes_from_below += l.upper_end.rx_bytes;
      leaf.bytes_to_below += l.upper_end.tx_bytes;
      leaf.host_ring_drops += l.upper_end.tx_dropped;
    } else {
      leaf.bytes_to_above += l.lower_end.tx_bytes;
      leaf.bytes_from_above += l.lower_end.rx_bytes;
      SwitchTraffic& spine = at(t.spines, l.spine, false);
      spine.bytes_from_below += l.upper_end.rx_bytes;
      spine.bytes_to_below += l.upper_end.tx_bytes;
    }
  }
  return t;
}

void add_fabric_totals(FabricTotals& sum, const FabricTotals& more) {
  for (const SwitchTraffic& l : more.leaves) {
    SwitchTraffic& s = at(sum.leaves, l.index, true);
    s.rail = l.rail;
    add(s, l);
  }
  for (const SwitchTraffic& l : more.spines) add(at(sum.spines, l.index, false), l);
}

}  // namespace collide::orchestrator::report
