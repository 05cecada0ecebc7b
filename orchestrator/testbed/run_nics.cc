#include "orchestrator/testbed/run_nics.h"

#include <algorithm>

#include <fmt/format.h>

namespace collide::orchestrator::testbed {

std::vector<v1::RunNic> run_nics(const TestbedPlan& plan, uint32_t host) {
  std::vector<const HostNic*> mine;
  for (const HostNic& n : plan.nics) {
    if (n.host == host) mine.push_back(&n);
  }
  std::sort(mine.begin(), mine.end(), [](const HostNic* a, const HostNic* b) { return a->nic < b->nic; });
  std::vector<v1::RunNic> out;
  for (const HostNic* n : mine) {
    v1::RunNic r;
    r.set_port(fmt::format("dpdk:net_af_xdp{},iface={}", host * mine.size() + n->nic, n->ifname));
    r.set_next_hop_mac(n->gateway_mac);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace collide::orchestrator::testbed
