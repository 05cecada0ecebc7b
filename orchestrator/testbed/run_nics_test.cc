#include "orchestrator/testbed/run_nics.h"

#include <set>

#include <gtest/gtest.h>

#include "tests/support/leaf_spine_spec.h"

namespace collide::orchestrator::testbed {
namespace {

TEST(RunNicsTest, EveryNicOfAHostInRailOrderOnItsOwnDeviceTowardsItsLeaf) {
  v1::VirtualTestbedSpec spec;
  spec.set_name("tb");
  spec.set_hosts(4);
  spec.set_nics_per_host(4);
  spec.set_leaves(4);
  spec.set_spines(2);
  auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok());
  std::set<std::string> devices;
  for (uint32_t h = 0; h < 4; ++h) {
    const std::vector<v1::RunNic> nics = run_nics(*plan, h);
    ASSERT_EQ(nics.size(), 4u);
    for (uint32_t n = 0; n < 4; ++n) {
      EXPECT_EQ(nics[n].port(), "dpdk:net_af_xdp" + std::to_string(h * 4 + n) + ",iface=eth" + std::to_string(n));
      devices.insert(nics[n].port().substr(0, nics[n].port().find(',')));
      // The leaf port of rail n facing host h.
      for (const PlannedLink& l : plan->links) {
        if (l.a.netns == "tb-h" + std::to_string(h) && l.a.ifname == "eth" + std::to_string(n)) {
          EXPECT_EQ(l.b.netns, "tb-leaf" + std::to_string(n));
          EXPECT_EQ(nics[n].next_hop_mac(), l.b.mac);
        }
      }
      EXPECT_FALSE(nics[n].has_core());
    }
  }
  EXPECT_EQ(devices.size(), 16u);  // no device name twice
  EXPECT_TRUE(run_nics(*plan, 4).empty());
}

TEST(RunNicsTest, OneNicPerHostKeepsTheHostsDeviceName) {
  v1::VirtualTestbedSpec spec = testing::leaf_spine_spec("tb", 3, 1, 0);
  auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok());
  const auto nics = run_nics(*plan, 2);
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(nics[0].port(), "dpdk:net_af_xdp2,iface=eth0");
  EXPECT_EQ(nics[0].next_hop_mac(), plan->nics[2].gateway_mac);
}

}  // namespace
}  // namespace collide::orchestrator::testbed
