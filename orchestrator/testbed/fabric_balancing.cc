#include "orchestrator/testbed/fabric_balancing.h"

#include <net/if.h>

#include <set>

#include <fmt/format.h>

#include "common/netns.h"

namespace collide::orchestrator::testbed {

std::string load_balancing_name(LoadBalancing mode) {
  switch (mode) {
    case v1::VirtualTestbedSpec::LOAD_BALANCING_QP_HASH: return "qp-hash";
    case v1::VirtualTestbedSpec::LOAD_BALANCING_SPRAY: return "spray";
    default: return "ecmp";
  }
}

injectors::Balancing balancing_of(LoadBalancing mode) {
  switch (mode) {
    case v1::VirtualTestbedSpec::LOAD_BALANCING_QP_HASH: return injectors::Balancing::kQpHash;
    case v1::VirtualTestbedSpec::LOAD_BALANCING_SPRAY: return injectors::Balancing::kSpray;
    default: return injectors::Balancing::kEcmp;
  }
}

Result<std::unique_ptr<FabricBalancing>> FabricBalancing::attach(const TestbedPlan& plan,
                                                                 LoadBalancing mode, uint64_t seed) {
  auto loaded = injectors::FabricBalancer::load(balancing_of(mode), seed);
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<FabricBalancing> b(new FabricBalancing(std::move(loaded).value()));
  std::set<std::string> hosts;
  for (const PlannedNamespace& ns : plan.namespaces) {
    if (ns.role == Role::kHost) hosts.insert(ns.name);
  }
  // Frames choose their uplink at the first leaf, as they enter it from a host.
  for (const PlannedLink& l : plan.links) {
    if (hosts.count(l.a.netns) == 0) continue;
    auto scope = netns::Scope::enter(l.b.netns);
    if (!scope.ok()) return scope.status();
    const unsigned ifindex = if_nametoindex(l.b.ifname.c_str());
    if (ifindex == 0) {
      return errno_status(errno, fmt::format("finding {} in {}", l.b.ifname, l.b.netns));
    }
    if (Status s = b->balancer_->attach(static_cast<int>(ifindex)); !s.ok()) {
      return s.with_context(fmt::format("load balancing on {} in {}", l.b.ifname, l.b.netns));
    }
  }
  return b;
}

Status FabricBalancing::set(LoadBalancing mode, uint64_t seed) {
  return balancer_->set_mode(balancing_of(mode), seed);
}

}  // namespace collide::orchestrator::testbed
