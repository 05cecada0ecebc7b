#include "orchestrator/testbed/bgp_fabric.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace collide::orchestrator::testbed {
namespace {

// FRR's limits: bfdd takes intervals of 10 ms to 60 s and multipliers of 2 to 255; bgpd a
// keepalive of 1 s and up, and a hold time of at least 3 s and 3 keepalives.
constexpr uint64_t kNsPerMs = 1'000'000;
constexpr uint64_t kNsPerS = 1'000'000'000;
constexpr uint32_t kMinBfdIntervalMs = 10, kMaxBfdIntervalMs = 60'000;
constexpr uint32_t kMinBfdMultiplier = 2, kMaxBfdMultiplier = 255;
constexpr uint32_t kMaxBgpTimerS = 65'535;
// What every speaker's BFD sessions use (bfdd_conf).
constexpr const char* kBfdProfile = "fabric";

Status bgp_error(const std::string& field, const std::string& what) {
  return invalid_argument(fmt::format("{}: {}", field, what));
}

// A duration in whole units of `unit_ns`, or what is wrong with it.
Result<uint32_t> whole_units(uint64_t ns, uint64_t unit_ns, const char* unit, const std::string& field) {
  if (ns % unit_ns != 0) return bgp_error(field, fmt::format("{} ns is not a whole number of {}", ns, unit));
  if (ns / unit_ns > UINT32_MAX) return bgp_error(field, fmt::format("{} ns is too long", ns));
  return static_cast<uint32_t>(ns / unit_ns);
}

bool is_switch(const PlannedNamespace& ns) { return ns.role == Role::kLeaf || ns.role == Role::kSpine; }

std::string router_id(const PlannedNamespace& ns) {
  return fmt::format("10.255.{}.{}", ns.role == Role::kLeaf ? 1 : 2, ns.index);
}

uint32_t asn_of(const PlannedNamespace& ns) {
  return ns.role == Role::kLeaf ? kLeafAsnBase + ns.index : kSpineAsn + ns.plane;
}

// Each leaf's hosts' rank subnets, by the leaf's namespace, in the plan's order.
std::map<std::string, std::vector<std::string>> subnets_by_leaf(const TestbedPlan& plan) {
  std::map<std::string, std::vector<std::string>> out;
  for (const HostNic& nic : plan.nics) {
    for (const PlannedLink& l : plan.links) {
      if (l.a.netns == nic.netns && l.a.ifname == nic.ifname) out[l.b.netns].push_back(nic.rank_subnet);
    }
  }
  return out;
}

// Each switch's neighbouring switches, by namespace.
std::map<std::string, std::set<std::string>> switch_neighbours(const TestbedPlan& plan,
                                                               const std::set<std::string>& switches) {
  std::map<std::string, std::set<std::string>> out;
  for (const PlannedLink& l : plan.links) {
    if (switches.count(l.a.netns) != 0 && switches.count(l.b.netns) != 0) {
      out[l.a.netns].insert(l.b.netns);
      out[l.b.netns].insert(l.a.netns);
    }
  }
  return out;
}

}  // namespace

Result<BgpTimers> resolve_bgp(const v1::VirtualTestbedSpec& spec) {
  const bool bgp = spec.routing() == v1::VirtualTestbedSpec::ROUTING_BGP;
  if (!bgp) {
    if (spec.has_bgp()) return bgp_error("bgp", "BGP's timers are for routing: bgp");
    return BgpTimers{};
  }
  if (spec.spines() == 0) return bgp_error("routing", "bgp needs spines: a single leaf has no one to peer with");
  if (spec.pods() > 1) return bgp_error("routing", "bgp is not offered with pods yet: a 2-tier fabric (or planes) only");
  if (spec.routes_size() > 0) {
    return bgp_error("routes", "routes of one's own are static routes: with routing: bgp the switches learn theirs");
  }
  BgpTimers t;
  const v1::BgpSettings& b = spec.bgp();
  if (b.bfd_interval_ns() != 0) {
    auto ms = whole_units(b.bfd_interval_ns(), kNsPerMs, "milliseconds", "bgp.bfd_interval_ns");
    if (!ms.ok()) return ms.status();
    if (*ms < kMinBfdIntervalMs || *ms > kMaxBfdIntervalMs) {
      return bgp_error("bgp.bfd_interval_ns",
                       fmt::format("{} ms not in {}..{} ms (bfdd's range)", *ms, kMinBfdIntervalMs, kMaxBfdIntervalMs));
    }
    t.bfd_interval_ms = *ms;
  }
  if (b.bfd_multiplier() != 0) {
    if (b.bfd_multiplier() < kMinBfdMultiplier || b.bfd_multiplier() > kMaxBfdMultiplier) {
      return bgp_error("bgp.bfd_multiplier",
                       fmt::format("{} not in {}..{}", b.bfd_multiplier(), kMinBfdMultiplier, kMaxBfdMultiplier));
    }
    t.bfd_multiplier = b.bfd_multiplier();
  }
  if (b.keepalive_ns() != 0) {
    auto s = whole_units(b.keepalive_ns(), kNsPerS, "seconds", "bgp.keepalive_ns");
    if (!s.ok()) return s.status();
    t.keepalive_s = *s;
  }
  if (b.hold_ns() != 0) {
    auto s = whole_units(b.hold_ns(), kNsPerS, "seconds", "bgp.hold_ns");
    if (!s.ok()) return s.status();
    t.hold_s = *s;
  }
  if (t.hold_s > kMaxBgpTimerS) return bgp_error("bgp.hold_ns", fmt::format("{} s is above {} s", t.hold_s, kMaxBgpTimerS));
  if (t.hold_s < 3 || t.keepalive_s * 3 > t.hold_s) {
    return bgp_error("bgp.hold_ns", fmt::format("a hold time of {} s with keepalives every {} s: it must be at least "
                                                "3 s and 3 keepalives",
                                                t.hold_s, t.keepalive_s));
  }
  return t;
}

std::vector<BgpSpeaker> bgp_speakers(const TestbedPlan& plan) {
  std::map<std::string, const PlannedNamespace*> switches;
  std::set<std::string> names;
  for (const PlannedNamespace& ns : plan.namespaces) {
    if (!is_switch(ns)) continue;
    switches[ns.name] = &ns;
    names.insert(ns.name);
  }
  const auto subnets = subnets_by_leaf(plan);
  std::vector<BgpSpeaker> out;
  for (const Role role : {Role::kLeaf, Role::kSpine}) {
    for (const PlannedNamespace& ns : plan.namespaces) {
      if (ns.role != role) continue;
      BgpSpeaker s;
      s.netns = ns.name;
      s.name = switch_name(ns);
      s.asn = asn_of(ns);
      s.router_id = router_id(ns);
      if (auto it = subnets.find(ns.name); it != subnets.end()) s.networks = it->second;
      for (const PlannedLink& l : plan.links) {
        const bool a_side = l.a.netns == ns.name;
        if (!a_side && l.b.netns != ns.name) continue;
        const LinkEnd& peer = a_side ? l.b : l.a;
        auto it = switches.find(peer.netns);
        if (it == switches.end()) continue;  // a host
        s.neighbors.push_back({bare_address(peer.address), asn_of(*it->second)});
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::string zebra_conf(const BgpSpeaker& s) {
  // Routes with their next hops inline, not through the kernel's nexthop objects: a link that goes
  // down takes its next hop out of the kernel's group, and zebra (8.4) does not put it back in
  // when the link returns, so a multipath route would keep one spine for good.
  return fmt::format("frr defaults datacenter\nhostname {}\nno zebra nexthop kernel enable\n", s.name);
}

std::string bfdd_conf(const BgpSpeaker& s, const BgpTimers& t) {
  return fmt::format(
      "frr defaults datacenter\nhostname {}\nbfd\n profile {}\n  receive-interval {}\n  transmit-interval {}\n"
      "  detect-multiplier {}\n exit\nexit\n",
      s.name, kBfdProfile, t.bfd_interval_ms, t.bfd_interval_ms, t.bfd_multiplier);
}

std::string bgpd_conf(const BgpSpeaker& s, const BgpTimers& t) {
  std::string out = fmt::format("frr defaults datacenter\nhostname {}\nrouter bgp {}\n bgp router-id {}\n", s.name,
                                s.asn, s.router_id);
  // No policy is needed to accept or announce anything: the fabric is the operator's own.
  out += " no bgp ebgp-requires-policy\n";
  out += fmt::format(" timers bgp {} {}\n", t.keepalive_s, t.hold_s);
  for (const BgpNeighbor& n : s.neighbors) {
    out += fmt::format(" neighbor {} remote-as {}\n", n.address, n.asn);
    out += fmt::format(" neighbor {} bfd profile {}\n", n.address, kBfdProfile);
    // A session that went down with its link is tried again every second once the link is back.
    out += fmt::format(" neighbor {} timers connect 1\n", n.address);
  }
  out += " address-family ipv4 unicast\n";
  for (const std::string& net : s.networks) out += fmt::format("  network {}\n", net);
  out += "  maximum-paths 64\n exit-address-family\nexit\n";
  return out;
}

std::vector<ConvergedRoute> bgp_converged_routes(const TestbedPlan& plan) {
  std::set<std::string> switches;
  for (const PlannedNamespace& ns : plan.namespaces) {
    if (is_switch(ns)) switches.insert(ns.name);
  }
  const auto neighbours = switch_neighbours(plan, switches);
  const auto subnets = subnets_by_leaf(plan);
  std::vector<ConvergedRoute> out;
  for (const PlannedNamespace& leaf : plan.namespaces) {
    if (leaf.role != Role::kLeaf) continue;
    const auto own = neighbours.find(leaf.name);
    if (own == neighbours.end()) continue;
    for (const auto& [other, nets] : subnets) {
      if (other == leaf.name) continue;
      const auto theirs = neighbours.find(other);
      if (theirs == neighbours.end()) continue;
      size_t shared = 0;
      for (const std::string& spine : own->second) shared += theirs->second.count(spine);
      if (shared == 0) continue;  // another plane: no path through the fabric
      for (const std::string& net : nets) out.push_back({leaf.name, net, shared});
    }
  }
  return out;
}

Result<std::vector<std::pair<std::string, size_t>>> parse_bgp_routes(const std::string& ip_json) {
  const nlohmann::json j = nlohmann::json::parse(ip_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return invalid_argument("ip -j route: not a JSON array");
  std::vector<std::pair<std::string, size_t>> out;
  for (const nlohmann::json& r : j) {
    if (!r.is_object() || !r.contains("dst") || !r["dst"].is_string()) {
      return invalid_argument("ip -j route: a route without its destination");
    }
    size_t hops = 0;
    if (r.contains("nexthops") && r["nexthops"].is_array()) {
      hops = r["nexthops"].size();
    } else if (r.contains("gateway")) {
      hops = 1;
    }
    out.emplace_back(r["dst"].get<std::string>(), hops);
  }
  return out;
}

}  // namespace collide::orchestrator::testbed
