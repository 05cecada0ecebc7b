#include "orchestrator/scenario/switch_queues.h"

#include "orchestrator/replay/transport_options.h"
#include "orchestrator/testbed/pfc_settings.h"
#include "orchestrator/testbed/port_queue.h"

namespace collide::orchestrator {

bool has_lossy_traffic(const v1::Scenario& s) {
  const v1::VirtualTestbedSpec& spec = s.testbed().virtual_();
  if (spec.routing() == v1::VirtualTestbedSpec::ROUTING_BGP) return true;
  const uint32_t lossless = testbed::resolve_pfc(spec).priority;
  const auto off_lossless = [lossless](uint32_t dscp) { return testbed::priority_of_dscp(dscp) != lossless; };
  if (s.runs().baseline() && off_lossless(replay::with_defaults(s.transport()).dscp())) return true;
  for (const v1::Variant& v : s.runs().variants()) {
    v1::TransportSettings merged = s.transport();
    merged.MergeFrom(v.transport());
    if (off_lossless(replay::with_defaults(merged).dscp())) return true;
  }
  for (const v1::Job& job : s.jobs()) {
    if (job.has_dscp() && off_lossless(job.dscp())) return true;
  }
  return false;
}

v1::VirtualTestbedSpec virtual_testbed_to_build(const v1::Scenario& s) {
  v1::VirtualTestbedSpec spec = s.testbed().virtual_();
  if (spec.has_pfc() && !spec.pfc().has_lossy_queue()) spec.mutable_pfc()->set_lossy_queue(has_lossy_traffic(s));
  return spec;
}

}  // namespace collide::orchestrator
