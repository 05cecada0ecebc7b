#include "orchestrator/testbed/switch_routes.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace collide::orchestrator::testbed {
namespace {

// The namespace of switch `name` ("leaf1") in `plan`, if it is one of its switches.
const PlannedNamespace* switch_named(const TestbedPlan& plan, const std::string& name) {
  const std::string netns = plan.name + "-" + name;
  for (const PlannedNamespace& ns : plan.namespaces) {
    if (ns.name == netns && ns.role != Role::kHost) return &ns;
  }
  return nullptr;
}

// The address (without its /31) of `to`'s end of the link between `from` and `to`.
const std::string* neighbour_address(const TestbedPlan& plan, const std::string& from, const std::string& to) {
  for (const PlannedLink& l : plan.links) {
    if (l.a.netns == from && l.b.netns == to) return &l.b.address;
    if (l.b.netns == from && l.a.netns == to) return &l.a.address;
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> routes_conflict_with(v1::VirtualTestbedSpec::LoadBalancing mode) {
  if (mode == v1::VirtualTestbedSpec::LOAD_BALANCING_ECMP) return std::nullopt;
  return std::string("need ecmp: with qp-hash or spray the leaves choose each frame's uplink themselves, past a "
                     "leaf's route");
}

std::optional<ProfileError> apply_switch_routes(const v1::VirtualTestbedSpec& spec, TestbedPlan& plan) {
  if (auto conflict = routes_conflict_with(spec.load_balancing()); conflict && spec.routes_size() > 0) {
    return ProfileError{"routes", *conflict};
  }
  std::set<std::pair<std::string, uint32_t>> routed;
  for (int i = 0; i < spec.routes_size(); ++i) {
    const v1::SwitchRoute& r = spec.routes(i);
    const std::string field = fmt::format("routes[{}]", i);
    const PlannedNamespace* on = switch_named(plan, r.on());
    if (on == nullptr) return ProfileError{field + ".on", fmt::format("no switch '{}' (leafN or spineN)", r.on())};
    const PlannedNamespace* via = switch_named(plan, r.via());
    if (via == nullptr) return ProfileError{field + ".via", fmt::format("no switch '{}' (leafN or spineN)", r.via())};
    if (r.to_host() >= spec.hosts()) {
      return ProfileError{field + ".to_host", fmt::format("{} but the hosts are 0..{}", r.to_host(), spec.hosts() - 1)};
    }
    if (!routed.insert({r.on(), r.to_host()}).second) {
      return ProfileError{field, fmt::format("{} already has a route of its own to host {}", r.on(), r.to_host())};
    }
    const std::string* next = neighbour_address(plan, on->name, via->name);
    if (next == nullptr) {
      return ProfileError{field + ".via", fmt::format("{} is not cabled to {}", r.via(), r.on())};
    }
    const std::string next_hop = bare_address(*next);
    for (const HostNic& nic : plan.nics) {
      if (nic.host != r.to_host()) continue;
      auto it = std::find_if(plan.routes.begin(), plan.routes.end(), [&](const PlannedRoute& p) {
        return p.netns == on->name && p.prefix == nic.rank_subnet;
      });
      // A leaf reaches other leaves' hosts through its default over the spines; a route of its
      // own for a host's subnet is more specific and wins.
      if (it == plan.routes.end()) {
        plan.routes.push_back({on->name, nic.rank_subnet, {next_hop}});
      } else {
        it->via = {next_hop};
      }
    }
  }
  return std::nullopt;
}

std::optional<ProfileError> check_switch_routes(const v1::VirtualTestbedSpec& spec) {
  v1::VirtualTestbedSpec bare = spec;
  bare.clear_routes();
  auto plan = plan_testbed(bare);
  if (!plan.ok()) return std::nullopt;  // the spec's own fault, which validate() names
  return apply_switch_routes(spec, *plan);
}

}  // namespace collide::orchestrator::testbed
