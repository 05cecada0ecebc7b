#include "orchestrator/report/fabric_traffic.h"

#include <string_view>

#include <fmt/format.h>

namespace collide::orchestrator::report {
namespace {

SwitchTraffic& at(std::vector<SwitchTraffic>& v, uint32_t index, const char* tier) {
  if (v.size() <= index) v.resize(index + 1);
  SwitchTraffic& s = v[index];
  s.leaf = std::string_view(tier) == "leaf";
  s.index = index;
  s.name = fmt::format("{}{}", tier, index);
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

uint64_t FabricTotals::super_spine_bytes() const {
  uint64_t sum = 0;
  for (const SwitchTraffic& s : super_spines) sum += s.bytes_from_below;
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
    if (l.spine_link) {
      SwitchTraffic& spine = at(t.spines, l.spine, "spine");
      spine.bytes_to_above += l.lower_end.tx_bytes;
      spine.bytes_from_above += l.lower_end.rx_bytes;
      SwitchTraffic& super = at(t.super_spines, l.super_spine, "super");
      super.bytes_from_below += l.upper_end.rx_bytes;
      super.bytes_to_below += l.upper_end.tx_bytes;
      continue;
    }
    SwitchTraffic& leaf = at(t.leaves, l.leaf, "leaf");
    leaf.rail = l.rail;
    if (l.host_link) {
      // The leaf's port is the link's upper end.
      leaf.bytes_from_below += l.upper_end.rx_bytes;
      leaf.bytes_to_below += l.upper_end.tx_bytes;
      leaf.host_ring_drops += l.upper_end.tx_dropped;
    } else {
      leaf.bytes_to_above += l.lower_end.tx_bytes;
      leaf.bytes_from_above += l.lower_end.rx_bytes;
      SwitchTraffic& spine = at(t.spines, l.spine, "spine");
      spine.bytes_from_below += l.upper_end.rx_bytes;
      spine.bytes_to_below += l.upper_end.tx_bytes;
    }
  }
  return t;
}

void add_fabric_totals(FabricTotals& sum, const FabricTotals& more) {
  for (const SwitchTraffic& l : more.leaves) {
    SwitchTraffic& s = at(sum.leaves, l.index, "leaf");
    s.rail = l.rail;
    add(s, l);
  }
  for (const SwitchTraffic& l : more.spines) add(at(sum.spines, l.index, "spine"), l);
  for (const SwitchTraffic& l : more.super_spines) add(at(sum.super_spines, l.index, "super"), l);
}

}  // namespace collide::orchestrator::report
