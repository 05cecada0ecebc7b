#include "orchestrator/testbed/topology_text.h"

#include <map>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "orchestrator/testbed/bgp_fabric.h"
#include "orchestrator/testbed/link_counters.h"

namespace collide::orchestrator::testbed {
namespace {

struct SwitchPorts {
  std::vector<std::string> up;    // the switches above it
  std::vector<std::string> down;  // the switches or host NICs below it
};

std::string rate(double gbps) { return gbps > 0 ? fmt::format("{:g} Gb/s", gbps) : "unshaped"; }

}  // namespace

std::string topology_text(const TestbedPlan& plan) {
  std::map<uint32_t, SwitchPorts> supers, spines, leaves;
  std::map<std::string, double> tier_gbps;  // by port tier, what leaves through such a port
  for (const PlannedLink& l : plan.links) {
    tier_gbps[l.a.queue.tier] = l.a.queue.gbps;
    tier_gbps[l.b.queue.tier] = l.b.queue.gbps;
    const report::FabricLink named = name_link(plan, l);
    if (named.host_link) {
      leaves[named.leaf].down.push_back(named.lower);
    } else if (named.spine_link) {
      spines[named.spine].up.push_back(named.upper);
      supers[named.super_spine].down.push_back(named.lower);
    } else {
      leaves[named.leaf].up.push_back(named.upper);
      spines[named.spine].down.push_back(named.lower);
    }
  }
  std::string out = fmt::format("testbed {}: {}{} spines, {} leaves, {} host NICs\n", plan.name,
                                supers.empty() ? "" : fmt::format("{} super-spines, ", supers.size()),
                                spines.size(), leaves.size(), plan.nics.size());
  std::map<uint32_t, uint32_t> pod_of_leaf, plane_of_leaf;
  bool planes = false;
  for (const PlannedNamespace& ns : plan.namespaces) {
    if (ns.role == Role::kLeaf) {
      pod_of_leaf[ns.index] = ns.pod;
      plane_of_leaf[ns.index] = ns.plane;
    }
    planes = planes || ns.plane > 0;
  }
  const auto print = [&](const char* role, const std::map<uint32_t, SwitchPorts>& tier) {
    for (const auto& [index, ports] : tier) {
      out += fmt::format("  {:<10}", fmt::format("{}{}", role, index));
      if (!ports.up.empty()) out += fmt::format("up: {}  ", fmt::join(ports.up, " "));
      out += fmt::format("down: {}", fmt::join(ports.down, " "));
      if (!supers.empty() && std::string_view(role) == "leaf") out += fmt::format("  (pod {})", pod_of_leaf[index]);
      if (planes && std::string_view(role) == "leaf") out += fmt::format("  (plane {})", plane_of_leaf[index]);
      out += "\n";
    }
  };
  print("super", supers);
  print("spine", spines);
  print("leaf", leaves);
  out += "  ports:";
  for (const auto& [tier, gbps] : tier_gbps) out += fmt::format(" {} {};", tier, rate(gbps));
  out.back() = '\n';
  if (plan.bgp) {
    const BgpTimers& t = *plan.bgp;
    out += fmt::format("  routing: BGP (FRR), leaf l AS {}+l, spines AS {}; BFD {} ms x {}; keepalive {} s, hold {} s\n",
                       kLeafAsnBase, kSpineAsn, t.bfd_interval_ms, t.bfd_multiplier, t.keepalive_s, t.hold_s);
  } else {
    out += "  routing: static (collide's own routes)\n";
  }
  return out;
}

}  // namespace collide::orchestrator::testbed
