#include "orchestrator/testbed/port_ecn_marker.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include <cerrno>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "common/netns.h"
#include "ebpf/port_ecn.h"  // map layout shared with the program
#include "injectors/bpf_log.h"
#include "injectors/tc_link.h"
#include "port_ecn.skel.h"

namespace collide::orchestrator::testbed {

struct PortEcnMarkers::Port {
  std::string key;  // "<netns>/<ifname>"
  port_ecn* skel = nullptr;
  std::optional<injectors::TcLink> link;
  ~Port() {
    link.reset();  // detach before the program goes
    port_ecn__destroy(skel);
  }
};

namespace {

Status configure_and_load(port_ecn* skel, const PortQueue& q, uint32_t mtu) {
  skel->rodata->rate_bytes_per_s = static_cast<uint64_t>(q.gbps * 1e9 / 8);
  skel->rodata->burst_bytes = shaper_burst_bytes(q, mtu);
  skel->rodata->buffer_bytes = q.buffer_bytes;
  skel->rodata->kmin_bytes = q.kmin_bytes;
  skel->rodata->kmax_bytes = q.kmax_bytes;
  skel->rodata->pmax_threshold = static_cast<uint64_t>(std::llround(std::ldexp(q.pmax, 32)));
  if (int rc = port_ecn__load(skel); rc != 0) return errno_status(-rc, "loading the ECN marking program");
  return {};
}

}  // namespace

Result<std::unique_ptr<PortEcnMarkers>> PortEcnMarkers::attach(const TestbedPlan& plan) {
  injectors::route_bpf_library_logs();
  std::unique_ptr<PortEcnMarkers> markers(new PortEcnMarkers());
  for (const PlannedLink& l : plan.links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      if (!e->queue.ecn) continue;
      auto port = std::make_unique<Port>();
      port->key = e->netns + "/" + e->ifname;
      port->skel = port_ecn__open();
      if (port->skel == nullptr) return errno_status(errno, "opening the ECN marking program");
      COLLIDE_RETURN_IF_ERROR(configure_and_load(port->skel, e->queue, plan.mtu));
      auto scope = netns::Scope::enter(e->netns);
      if (!scope.ok()) return scope.status();
      const unsigned ifindex = if_nametoindex(e->ifname.c_str());
      if (ifindex == 0) return errno_status(errno, "finding " + port->key);
      auto link = injectors::TcLink::attach(bpf_program__fd(port->skel->progs.port_ecn_egress),
                                            static_cast<int>(ifindex), injectors::Direction::kEgress);
      if (!link.ok()) return link.status().with_context("attaching ECN marking to " + port->key);
      port->link.emplace(std::move(link).value());
      markers->ports_.push_back(std::move(port));
    }
  }
  return markers;
}

PortEcnMarkers::~PortEcnMarkers() = default;

std::map<std::string, MarkerCounts> PortEcnMarkers::counts() const {
  std::map<std::string, MarkerCounts> out;
  for (const auto& p : ports_) {
    port_ecn_state s{};
    const uint32_t zero = 0;
    // A failed read counts nothing new; the next sample reads again.
    if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.state), &zero, &s) != 0) continue;
    out[p->key] = {s.marked, s.early_drops};
  }
  return out;
}

}  // namespace collide::orchestrator::testbed
