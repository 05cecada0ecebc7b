#include "orchestrator/testbed/testbed_plan.h"

#include <algorithm>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "orchestrator/testbed/bgp_fabric.h"
#include "orchestrator/testbed/pfc_settings.h"
#include "orchestrator/testbed/switch_routes.h"
#include "replayer/engine/pfc_sender.h"

namespace collide::orchestrator::testbed {
namespace {

constexpr uint32_t kMaxHosts = 255;
constexpr uint32_t kMaxNics = 8;
constexpr uint32_t kMaxSwitches = 64;
constexpr uint32_t kLinkBase = (198u << 24) | (18u << 16);  // 198.18.0.0/16: /31 per link
constexpr uint32_t kRankBase = (198u << 24) | (19u << 16);  // 198.19.0.0/16: /27 per host NIC
constexpr const char* kRankPrefix = "198.19.0.0/16";          // every host NIC's rank subnet

std::string ip(uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

// Locally administered MACs that say where they are: 02:c0:<namespace>:<namespace>:<port>:00.
std::string mac_of(uint32_t ns_id, uint32_t port) {
  return fmt::format("02:c0:{:02x}:{:02x}:{:02x}:00", (ns_id >> 8) & 0xff, ns_id & 0xff, port);
}

}  // namespace

std::string switch_name(const PlannedNamespace& ns) {
  switch (ns.role) {
    case Role::kHost: return fmt::format("h{}", ns.index);
    case Role::kLeaf: return fmt::format("leaf{}", ns.index);
    case Role::kSpine: return fmt::format("spine{}", ns.index);
    case Role::kSuperSpine: return fmt::format("super{}", ns.index);
  }
  return "";
}

std::optional<NamespaceOfTestbed> namespace_of_testbed(const std::string& netns) {
  static const std::regex kName("(.+)-(h|leaf|spine|super)[0-9]+");
  std::smatch m;
  if (!std::regex_match(netns, m, kName)) return std::nullopt;
  const std::string role = m[2];
  return NamespaceOfTestbed{m[1], role == "h"       ? Role::kHost
                                  : role == "leaf"  ? Role::kLeaf
                                  : role == "spine" ? Role::kSpine
                                                    : Role::kSuperSpine};
}

std::string host_namespace(const std::string& testbed, uint32_t host) {
  return fmt::format("{}-h{}", testbed, host);
}

std::string route_replace_line(const PlannedRoute& route) {
  std::string line = "route replace " + route.prefix;
  if (route.via.size() == 1) return line + " via " + route.via[0];
  for (const std::string& hop : route.via) line += " nexthop via " + hop;
  return line;
}

uint32_t leaf_of_nic(uint32_t host, uint32_t nic, uint32_t nics_per_host, uint32_t rail_groups) {
  return (host % rail_groups) * nics_per_host + nic;
}

std::vector<uint32_t> leaf_group_of_hosts(const v1::VirtualTestbedSpec& spec) {
  const uint32_t nics = std::max(1u, spec.nics_per_host());
  const uint32_t groups = std::max(1u, spec.leaves() / nics);
  std::vector<uint32_t> out(spec.hosts());
  for (uint32_t h = 0; h < spec.hosts(); ++h) out[h] = leaf_of_nic(h, 0, nics, groups) / nics;
  return out;
}

uint32_t rank_address(uint32_t host, uint32_t nic, uint32_t slot) {
  return kRankBase | (host << 8) | (nic * 32 + slot + 1);
}

// 3-tier: the leaves and spines split evenly into pods, a rail group stays in one pod, and the
// super-spines join the pods (and are only there to).
Status validate_pods(const v1::VirtualTestbedSpec& s) {
  if (s.pods() <= 1) {
    if (s.super_spines() > 0) return invalid_argument("super_spines join pods: set pods (2 or more) too");
    return {};
  }
  const uint32_t pods = s.pods();
  if (s.super_spines() == 0 || s.super_spines() > kMaxSwitches) {
    return invalid_argument(fmt::format("super_spines {}: {} pods need 1..{} super-spines to reach each other",
                                        s.super_spines(), pods, kMaxSwitches));
  }
  if (s.leaves() % pods != 0 || s.spines() % pods != 0 || s.spines() < pods) {
    return invalid_argument(fmt::format(
        "leaves {} and spines {} split evenly into {} pods, each with a spine at least", s.leaves(), s.spines(), pods));
  }
  if ((s.leaves() / pods) % s.nics_per_host() != 0) {
    return invalid_argument(fmt::format(
        "{} leaves per pod with nics_per_host {}: a pod holds whole rail groups (one leaf per NIC)",
        s.leaves() / pods, s.nics_per_host()));
  }
  // What is built for a 2-tier fabric only, refused rather than half done.
  if (s.routes_size() > 0) return invalid_argument("routes: not on a fabric with pods yet");
  if (s.pfc().lossless()) return invalid_argument("pfc.lossless: not on a fabric with pods yet");
  return {};
}

// Planes: the spines split evenly, each plane takes whole rails, and planes are not pods.
Status validate_planes(const v1::VirtualTestbedSpec& s) {
  if (s.planes() <= 1) return {};
  const uint32_t planes = s.planes();
  if (s.pods() > 1) return invalid_argument("planes and pods: one or the other");
  if (s.nics_per_host() % planes != 0) {
    return invalid_argument(fmt::format("planes {} with nics_per_host {}: each plane takes whole rails, so "
                                        "nics_per_host must be a multiple of planes", planes, s.nics_per_host()));
  }
  if (s.spines() < planes || s.spines() % planes != 0) {
    return invalid_argument(fmt::format("spines {} split evenly into {} planes, each with a spine at least",
                                        s.spines(), planes));
  }
  return {};
}

Status validate(const v1::VirtualTestbedSpec& s) {
  static const std::regex kName("[a-z][a-z0-9]{0,5}");
  if (!std::regex_match(s.name(), kName)) {
    return invalid_argument(fmt::format(
        "testbed name '{}': 1-6 lowercase letters or digits, starting with a letter (interface "
        "names are short)", s.name()));
  }
  if (s.hosts() == 0 || s.hosts() > kMaxHosts) {
    return invalid_argument(fmt::format("hosts: {} not in 1..{}", s.hosts(), kMaxHosts));
  }
  if (s.nics_per_host() == 0 || s.nics_per_host() > kMaxNics) {
    return invalid_argument(fmt::format("nics_per_host: {} not in 1..{}", s.nics_per_host(), kMaxNics));
  }
  if (s.leaves() == 0 || s.leaves() > kMaxSwitches || s.spines() > kMaxSwitches) {
    return invalid_argument(fmt::format("leaves {} / spines {}: want 1..{} leaves, 0..{} spines",
                                        s.leaves(), s.spines(), kMaxSwitches, kMaxSwitches));
  }
  // Rails: NIC r of every host is cabled to the leaf of rail r, in as many rail groups as the
  // leaves make (nics_per_host leaves each), so the leaves must split evenly into groups.
  if (s.nics_per_host() > 1 && s.leaves() % s.nics_per_host() != 0) {
    return invalid_argument(fmt::format(
        "leaves {} with nics_per_host {}: rails need one leaf per NIC in every rail group, so "
        "leaves must be a multiple of nics_per_host (e.g. {})",
        s.leaves(), s.nics_per_host(),
        (s.leaves() / s.nics_per_host() + 1) * s.nics_per_host()));
  }
  if (s.spines() == 0 && s.leaves() > 1) {
    return invalid_argument("several leaves need spines to reach each other");
  }
  if (s.host_link_gbps() < 0 || s.fabric_link_gbps() < 0 || s.super_link_gbps() < 0) {
    return invalid_argument("negative link rate");
  }
  COLLIDE_RETURN_IF_ERROR(validate_pods(s));
  COLLIDE_RETURN_IF_ERROR(validate_planes(s));
  COLLIDE_RETURN_IF_ERROR(resolve_bgp(s).status());
  if (const uint32_t ring = s.host_rx_ring_frames();
      ring != 0 && (ring < 64 || ring > 4096 || (ring & (ring - 1)) != 0)) {
    return invalid_argument(fmt::format("host_rx_ring_frames: {} is not a power of two in 64..4096", ring));
  }
  if (s.host_rx_buffer_frames() > replayer::engine::kMaxDrainBufferFrames) {
    return invalid_argument(fmt::format("host_rx_buffer_frames: {} is above {}, what a NIC's buffer can hold here",
                                        s.host_rx_buffer_frames(), replayer::engine::kMaxDrainBufferFrames));
  }
  if (auto e = check_port_profiles(s)) return invalid_argument(fmt::format("{}: {}", e->field, e->what));
  if (s.mtu() != 0 && (s.mtu() < 1280 || s.mtu() > 9000)) {
    return invalid_argument(fmt::format("mtu {} not in 1280..9000", s.mtu()));
  }
  return {};
}

Result<TestbedPlan> plan_testbed(const v1::VirtualTestbedSpec& spec) {
  COLLIDE_RETURN_IF_ERROR(validate(spec));
  TestbedPlan plan;
  plan.name = spec.name();
  plan.mtu = spec.mtu() == 0 ? 1500 : spec.mtu();
  if (spec.routing() == v1::VirtualTestbedSpec::ROUTING_BGP) {
    auto timers = resolve_bgp(spec);
    if (!timers.ok()) return timers.status();
    plan.bgp = *timers;
  }
  auto ns_name = [&](const char* role, uint32_t i) { return fmt::format("{}-{}{}", spec.name(), role, i); };
  const uint32_t hosts = spec.hosts();
  const uint32_t leaves = spec.leaves();
  const uint32_t spines = spec.spines();
  const uint32_t pods = std::max(1u, spec.pods());
  const uint32_t supers = pods > 1 ? spec.super_spines() : 0;
  const uint32_t leaves_per_pod = leaves / pods, spines_per_pod = spines / pods;
  const uint32_t nics = spec.nics_per_host();
  const uint32_t planes = std::max(1u, spec.planes());
  const uint32_t spines_per_plane = spines / planes;
  auto plane_of_leaf = [&](uint32_t l) { return (l % nics) % planes; };  // its rail's plane
  // Namespace ids for MACs: hosts first, then leaves, spines and super-spines.
  auto host_id = [](uint32_t h) { return h; };
  auto leaf_id = [&](uint32_t l) { return hosts + l; };
  auto spine_id = [&](uint32_t s) { return hosts + leaves + s; };
  auto super_id = [&](uint32_t x) { return hosts + leaves + spines + x; };
  for (uint32_t h = 0; h < hosts; ++h) plan.namespaces.push_back({host_namespace(spec.name(), h), Role::kHost, h});
  for (uint32_t l = 0; l < leaves; ++l) {
    plan.namespaces.push_back({ns_name("leaf", l), Role::kLeaf, l, l / leaves_per_pod, plane_of_leaf(l)});
  }
  for (uint32_t s = 0; s < spines; ++s) {
    plan.namespaces.push_back({ns_name("spine", s), Role::kSpine, s, s / spines_per_pod, s / spines_per_plane});
  }
  for (uint32_t x = 0; x < supers; ++x) plan.namespaces.push_back({ns_name("super", x), Role::kSuperSpine, x});
  // A switch's end of a link: its port `port` ("p3"), its MAC from the namespace id and the port.
  auto switch_end = [&](const char* role, uint32_t index, uint32_t ns_id, uint32_t port, uint32_t address,
                        PortQueue queue) {
    return LinkEnd{ns_name(role, index), fmt::format("p{}", port), mac_of(ns_id, port), ip(address) + "/31",
                   std::move(queue)};
  };
  // Two tiers that hash in turn need keys of their own, or a spine sends every flow a leaf gave
  // it up the same link (in a 2-tier fabric only the leaves choose, and the kernel's key serves).
  if (supers > 0 && !spec.shared_hash_seed()) {
    for (uint32_t i = 0; i < plan.namespaces.size(); ++i) {
      if (plan.namespaces[i].role != Role::kHost) plan.namespaces[i].hash_seed = 0x9e3779b1u * (i + 1) | 1u;
    }
  }

  uint32_t next_link = 0;
  auto link_addresses = [&](uint32_t& a, uint32_t& b) {
    a = kLinkBase + 2 * next_link;
    b = a + 1;
    ++next_link;
  };
  std::vector<uint32_t> leaf_ports(leaves, 0);
  // Leaf routes towards its hosts' rank subnets, collected for the spines too.
  std::map<uint32_t, std::vector<std::string>> subnets_of_leaf;
  const uint32_t groups = leaves / nics;  // validate: leaves is a multiple of nics
  for (uint32_t h = 0; h < hosts; ++h) {
    for (uint32_t n = 0; n < nics; ++n) {
      const uint32_t leaf = leaf_of_nic(h, n, nics, groups);
      uint32_t host_ip, leaf_ip;
      link_addresses(host_ip, leaf_ip);
      const uint32_t port = leaf_ports[leaf]++;
      PlannedLink link;
      link.gbps = spec.host_link_gbps();
      link.a = {host_namespace(spec.name(), h), fmt::format("eth{}", n), mac_of(host_id(h), n),
                ip(host_ip) + "/31", port_queue(kTierHostNic, nullptr, link.gbps)};
      link.b = switch_end("leaf", leaf, leaf_id(leaf), port, leaf_ip,
                          port_queue(kTierLeafDown, spec.has_leaf_down() ? &spec.leaf_down() : nullptr, link.gbps));
      const std::string subnet = ip(rank_address(h, n, 0) - 1) + "/27";
      plan.routes.push_back({link.b.netns, subnet, {ip(host_ip)}});
      plan.neighbors.push_back({link.b.netns, ip(host_ip), link.a.mac, link.b.ifname});
      plan.nics.push_back({h, n, link.a.netns, link.a.ifname, link.a.mac, link.b.mac, subnet});
      subnets_of_leaf[leaf].push_back(subnet);
      plan.links.push_back(std::move(link));
    }
  }
  std::vector<std::vector<std::string>> leaf_uplinks(leaves);  // spine addresses seen by a leaf
  std::vector<uint32_t> spine_ports(spines, 0);
  std::map<uint32_t, std::vector<std::string>> subnets_of_spine;  // the hosts' under its pod
  for (uint32_t l = 0; l < leaves; ++l) {
    // Its pod's spines (3-tier), its plane's (planes), else every spine.
    const uint32_t pod = l / leaves_per_pod, plane = plane_of_leaf(l);
    const uint32_t first = planes > 1 ? plane * spines_per_plane : pod * spines_per_pod;
    const uint32_t count = planes > 1 ? spines_per_plane : spines_per_pod;
    for (uint32_t s = first; s < first + count; ++s) {
      uint32_t leaf_ip, spine_ip;
      link_addresses(leaf_ip, spine_ip);
      PlannedLink link;
      const uint32_t port = leaf_ports[l]++;
      link.gbps = spec.fabric_link_gbps();
      link.a = switch_end("leaf", l, leaf_id(l), port, leaf_ip,
                          port_queue(kTierLeafUp, spec.has_leaf_up() ? &spec.leaf_up() : nullptr, link.gbps));
      link.b = switch_end("spine", s, spine_id(s), spine_ports[s]++, spine_ip,
                          port_queue(kTierSpineDown, spec.has_spine_down() ? &spec.spine_down() : nullptr, link.gbps));
      leaf_uplinks[l].push_back(ip(spine_ip));
      for (const std::string& subnet : subnets_of_leaf[l]) {
        plan.routes.push_back({link.b.netns, subnet, {ip(leaf_ip)}, /*fabric=*/true});
        subnets_of_spine[s].push_back(subnet);
      }
      plan.links.push_back(std::move(link));
    }
    if (spines > 0) plan.routes.push_back({ns_name("leaf", l), kRankPrefix, leaf_uplinks[l], /*fabric=*/true});
  }
  // 3-tier: every spine up to every super-spine; a spine sends what is not under its pod up (ECMP
  // over the super-spines), a super-spine sends each pod's hosts down over that pod's spines.
  std::map<std::pair<uint32_t, std::string>, std::vector<std::string>> super_routes;  // (super, subnet)
  for (uint32_t s = 0; s < spines && supers > 0; ++s) {
    std::vector<std::string> uplinks;
    for (uint32_t x = 0; x < supers; ++x) {
      uint32_t spine_ip, super_ip;
      link_addresses(spine_ip, super_ip);
      PlannedLink link;
      const uint32_t port = spine_ports[s]++;
      link.gbps = spec.super_link_gbps();
      link.a = switch_end("spine", s, spine_id(s), port, spine_ip,
                          port_queue(kTierSpineUp, spec.has_spine_up() ? &spec.spine_up() : nullptr, link.gbps));
      link.b = switch_end("super", x, super_id(x), s, super_ip,
                          port_queue(kTierSuperDown, spec.has_super_down() ? &spec.super_down() : nullptr, link.gbps));
      uplinks.push_back(ip(super_ip));
      for (const std::string& subnet : subnets_of_spine[s]) super_routes[{x, subnet}].push_back(ip(spine_ip));
      plan.links.push_back(std::move(link));
    }
    plan.routes.push_back({ns_name("spine", s), kRankPrefix, uplinks, /*fabric=*/true});
  }
  for (const auto& [at, via] : super_routes) {
    plan.routes.push_back({ns_name("super", at.first), at.second, via, /*fabric=*/true});
  }
  if (auto e = apply_switch_routes(spec, plan)) return invalid_argument(fmt::format("{}: {}", e->field, e->what));
  // A lossy queue (pfc.lossy_queue, decided for a scenario by virtual_testbed_to_build): every
  // shaped switch port gets a queue of its own for the lossless priority, which pauses hold alone.
  if (spec.has_pfc() && spec.pfc().lossy_queue()) {
    const uint32_t priority = resolve_pfc(spec).priority;
    for (PlannedLink& l : plan.links) {
      for (LinkEnd* end : {&l.a, &l.b}) {
        if (end->queue.tier != kTierHostNic && end->queue.gbps > 0) end->queue.lossless_priority = priority;
      }
    }
  }
  return plan;
}

}  // namespace collide::orchestrator::testbed
