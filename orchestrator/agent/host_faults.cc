#include "orchestrator/agent/host_faults.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "orchestrator/faults/armed_faults.h"
#include "orchestrator/testbed/link_names.h"

namespace collide::orchestrator::agent {
namespace {

namespace scenario_faults = collide::orchestrator::faults;

// Every scenario fault kind, armed by orchestrator/faults: rules loaded and attached now, their
// windows counting from start() (the go), undone when this object goes.
class ArmedScenarioFaults final : public ArmedFaults {
 public:
  std::vector<v1::Fault> faults;  // the armed faults point into these
  std::unique_ptr<scenario_faults::ArmedFaults> armed;

  size_t size() const override { return faults.size(); }
  std::vector<FaultCounts> counts() const override {
    std::vector<FaultCounts> out;
    for (const report::FaultWindow& w : armed->ground_truth()) {
      out.push_back({w.name, w.kind, w.packets_matched, w.packets_acted, w.start_ns, w.end_ns});
    }
    return out;
  }
  Status start() override { return armed->start(); }
};

}  // namespace

namespace {

Result<std::unique_ptr<ArmedFaults>> arm(const std::vector<v1::Fault>& faults,
                                         const testbed::TestbedPlan& plan, FaultDraw draw,
                                         scenario_faults::ArmOptions options) {
  auto out = std::make_unique<ArmedScenarioFaults>();
  out->faults = faults;
  options.start_now = false;
  std::vector<const v1::Fault*> pointers;
  for (const v1::Fault& f : out->faults) pointers.push_back(&f);
  options.repetition = draw.repetition;
  options.runs_seed = draw.runs_seed;
  auto armed = scenario_faults::arm_faults(pointers, plan, options);
  if (!armed.ok()) return armed.status();
  out->armed = std::move(armed).value();
  return std::unique_ptr<ArmedFaults>(std::move(out));
}

// Where a fault acts on a real host's own NIC, or why it cannot.
Result<scenario_faults::FaultSite> own_nic_site(const v1::Fault& f, const std::string& netns,
                                                const std::vector<std::string>& interfaces) {
  auto nic = own_nic_interface(f, interfaces);
  if (!nic.ok()) return nic.status();
  const std::string& ifname = *nic;
  scenario_faults::FaultSite site;
  site.host_link = true;
  site.own_nic = true;
  site.leaf_netns = site.peer_netns = netns;
  site.leaf_ifname = site.peer_ifname = ifname;
  const std::string kind = scenario_faults::kind_name(f.kind());
  if (scenario_faults::is_packet_fault(f)) {
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

Result<std::string> own_nic_interface(const v1::Fault& f, const std::vector<std::string>& interfaces) {
  auto name = testbed::parse_host_link(f.link());
  if (!name.ok()) return name.status().with_context("fault " + f.name());
  if (!name->has_value()) {
    return failed_precondition(fmt::format("fault {}: '{}' is not a host link", f.name(), f.link()));
  }
  const uint32_t nic = (*name)->nic;
  if (nic >= interfaces.size()) {
    return not_found(fmt::format("fault {}: link '{}': this host's NICs are nic0..nic{} ({})", f.name(),
                                 f.link(), static_cast<int64_t>(interfaces.size()) - 1,
                                 fmt::join(interfaces, ", ")));
  }
  return interfaces[nic];
}

Result<std::unique_ptr<ArmedFaults>> arm_host_faults(const std::vector<v1::Fault>& faults,
                                                     const testbed::TestbedPlan& plan,
                                                     FaultDraw draw) {
  return arm(faults, plan, draw, {});
}

Result<std::unique_ptr<ArmedFaults>> arm_own_nic_faults(const std::vector<v1::Fault>& faults,
                                                        const std::string& netns,
                                                        const std::vector<std::string>& interfaces,
                                                        FaultDraw draw) {
  // Checked first, so that nothing is armed when one of them cannot be.
  for (const v1::Fault& f : faults) {
    auto site = own_nic_site(f, netns, interfaces);
    if (!site.ok()) return site.status();
  }
  scenario_faults::ArmOptions options;
  options.site_of = [netns, interfaces](const v1::Fault& f) { return own_nic_site(f, netns, interfaces); };
  testbed::TestbedPlan plan;
  plan.name = "real";
  return arm(faults, plan, draw, std::move(options));
}

}  // namespace collide::orchestrator::agent
