#include "orchestrator/agent/host_faults.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::agent {
namespace {

v1::Fault fault_on(const std::string& link) {
  v1::Fault f;
  f.set_name("f");
  f.set_kind(v1::Fault::KIND_LOSS);
  f.set_link(link);
  return f;
}

TEST(HostFaultsTest, ARealHostsFaultActsOnTheNicItsLinkNames) {
  const std::vector<std::string> interfaces = {"ens1f0", "ens1f1"};
  EXPECT_EQ(*own_nic_interface(fault_on("h1"), interfaces), "ens1f0");
  EXPECT_EQ(*own_nic_interface(fault_on("h1.nic1"), interfaces), "ens1f1");
  EXPECT_EQ(*own_nic_interface(fault_on("h1.eth1"), interfaces), "ens1f1");
  auto missing = own_nic_interface(fault_on("h1.nic2"), interfaces);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "fault f: link 'h1.nic2': this host's NICs are nic0..nic1 (ens1f0, ens1f1)");
  EXPECT_FALSE(own_nic_interface(fault_on("leaf0-spine0"), interfaces).ok());
}

}  // namespace
}  // namespace collide::orchestrator::agent
