#include "orchestrator/faults/own_nic_faults.h"

#include <algorithm>

#include <fmt/format.h>

#include "orchestrator/faults/fault_nic.h"
#include "orchestrator/faults/fault_plan.h"

namespace collide::orchestrator::faults {
namespace {

// Where a fault acts on a real host's own NIC, or why it cannot.
Result<FaultSite> own_nic_site(const v1::Fault& f, const std::string& netns, const std::string& ifname) {
  FaultSite site;
  site.host_link = true;
  site.own_nic = true;
  site.leaf_netns = site.peer_netns = netns;
  site.leaf_ifname = site.peer_ifname = ifname;
  const std::string kind = kind_name(f.kind());
  if (is_packet_fault(f)) {
    if (f.direction() != v1::Fault::DIRECTION_TO_HOST) {
      return failed_precondition(fmt::format(
          "fault {} ({}) on {}: on a real host only frames arriving at its NIC can be faulted (the "
          "replay sends past the qdiscs); use direction to-host here, or on the peer's link",
          f.name(), kind, ifname));
    }
    site.hooks.push_back({netns, ifname, injectors::Direction::kIngress, /*xdp=*/true});
  } else if (f.kind() == v1::Fault::KIND_RATE_LIMIT) {
    return failed_precondition(fmt::format(
        "fault {} (rate-limit) on {}: a real host's packet socket bypasses its qdiscs, so the "
        "agent cannot shape its own NIC",
        f.name(), ifname));
  }
  return site;
}

}  // namespace

Result<std::unique_ptr<ArmedFaults>> arm_own_nic_faults(const std::vector<const v1::Fault*>& faults,
                                                        const std::string& netns,
                                                        const std::vector<std::string>& interfaces,
                                                        ArmOptions options) {
  const auto site_of = [netns, interfaces](const v1::Fault& f) -> Result<FaultSite> {
    auto ifname = own_nic_of_fault(f, interfaces);
    if (!ifname.ok()) return ifname.status();
    auto site = own_nic_site(f, netns, *ifname);
    if (site.ok()) {
      site->nic = static_cast<uint32_t>(std::find(interfaces.begin(), interfaces.end(), *ifname) - interfaces.begin());
    }
    return site;
  };
  // Checked first, so that nothing is armed when one of them cannot be.
  for (const v1::Fault* f : faults) {
    if (auto site = site_of(*f); !site.ok()) return site.status();
  }
  options.site_of = site_of;
  testbed::TestbedPlan plan;
  plan.name = "real";
  return arm_faults(faults, plan, options);
}

}  // namespace collide::orchestrator::faults
