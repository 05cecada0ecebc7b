// Where a run's ranks go on real hosts, from what their agents described: NICs in rail order,
// each rank on an address of its own interface.
#include "orchestrator/run/real_host_placement.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "orchestrator/scenario/scenario.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator {
namespace {

v1::InterfaceDescription interface(const std::string& name, std::vector<std::string> ipv4, uint32_t mtu = 1500) {
  v1::InterfaceDescription i;
  i.set_name(name);
  for (const std::string& a : ipv4) i.add_ipv4(a);
  i.set_mtu(mtu);
  return i;
}

class RealHostPlacementTest : public ::testing::Test {
 protected:
  // A host whose agent listens on a control address no interface of the run has.
  void host(std::vector<v1::InterfaceDescription> offered, bool named = true) {
    const auto h = static_cast<uint32_t>(agents_.size());
    v1::Agent* spec = scenario_.mutable_testbed()->add_agents();
    spec->set_address(fmt::format("192.0.2.{}:7411", h + 1));
    spec->set_host(h);
    v1::HostDescription d;
    for (const v1::InterfaceDescription& i : offered) {
      if (named) spec->add_interfaces(i.name());
      *d.add_interfaces() = i;
    }
    AgentHandle a;
    a.index = h;
    a.host = h;
    a.address = spec->address();
    agents_.push_back(std::move(a));
    described_[h] = d;
  }

  Result<RealHostPlacement> place(uint32_t per_host) {
    return place_on_real_hosts(scenario_, agents_, described_, per_host);
  }

  std::vector<std::string> addresses(const RealHostPlacement& p) {
    std::vector<std::string> out;
    for (const v1::RankEndpoint& e : p.endpoints) {
      EXPECT_EQ(e.rank(), out.size());
      out.push_back(fmt::format("{}@{}", e.ipv4(), e.host()));
    }
    return out;
  }

  v1::Scenario scenario_;
  std::vector<AgentHandle> agents_;
  std::map<uint32_t, v1::HostDescription> described_;
};

TEST_F(RealHostPlacementTest, EachRankOfAHostRunsOnItsOwnNicInRailOrder) {
  scenario_.mutable_testbed()->set_port("af_packet");
  host({interface("eth0", {"10.0.0.1"}), interface("eth1", {"10.0.1.1"})});
  host({interface("eth0", {"10.0.0.2"}), interface("eth1", {"10.0.1.2"})});
  auto p = place(2);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->nics_per_host, 2u);
  EXPECT_EQ(addresses(*p),
            (std::vector<std::string>{"10.0.0.1@0", "10.0.1.1@0", "10.0.0.2@1", "10.0.1.2@1"}));
  ASSERT_EQ(p->nics_of_host.at(1).size(), 2u);
  EXPECT_EQ(p->nics_of_host.at(1)[0].interface, "eth0");
  EXPECT_EQ(p->nics_of_host.at(1)[0].port, "afpacket:eth0");
  EXPECT_EQ(p->nics_of_host.at(1)[1].interface, "eth1");
  EXPECT_EQ(p->nics_of_host.at(1)[1].port, "afpacket:eth1");
}

TEST_F(RealHostPlacementTest, TheRailOrderIsTheOrderTheInterfacesAreListedIn) {
  host({interface("eth1", {"10.0.1.1"}), interface("eth0", {"10.0.0.1"})});
  auto p = place(2);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(addresses(*p), (std::vector<std::string>{"10.0.1.1@0", "10.0.0.1@0"}));
  // Two DPDK devices in one replay: each has a name of its own.
  EXPECT_EQ(p->nics_of_host.at(0)[0].port, "dpdk:net_af_xdp0,iface=eth1");
  EXPECT_EQ(p->nics_of_host.at(0)[1].port, "dpdk:net_af_xdp1,iface=eth0");
}

TEST_F(RealHostPlacementTest, MoreRanksThanNicsShareThemInTurnEachOnAnAddressOfItsOwn) {
  host({interface("eth0", {"10.0.0.1", "10.0.0.11"}), interface("eth1", {"10.0.1.1", "10.0.1.11"})});
  auto p = place(4);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->nics_per_host, 2u);
  EXPECT_EQ(addresses(*p),
            (std::vector<std::string>{"10.0.0.1@0", "10.0.1.1@0", "10.0.0.11@0", "10.0.1.11@0"}));
}

TEST_F(RealHostPlacementTest, FewerRanksThanInterfacesUseTheFirstOnes) {
  host({interface("eth0", {"10.0.0.1"}), interface("eth1", {"10.0.1.1"})});
  host({interface("eth0", {"10.0.0.2"}), interface("eth1", {"10.0.1.2"})});
  auto p = place(1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->nics_per_host, 1u);
  EXPECT_EQ(p->nics_of_host.at(0).size(), 1u);
  EXPECT_EQ(addresses(*p), (std::vector<std::string>{"10.0.0.1@0", "10.0.0.2@1"}));
}

TEST_F(RealHostPlacementTest, AnInterfaceWithTooFewAddressesForItsRanksIsNamed) {
  // Three ranks on two NICs: eth0 carries local ranks 0 and 2.
  host({interface("eth0", {"10.0.0.1"}), interface("eth1", {"10.0.1.1"})});
  auto p = place(3);
  ASSERT_THAT(p, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_NE(p.status().message().find("host 0"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("interface eth0 (NIC 0) has 1 IPv4 address(es) for its 2 rank(s)"),
            std::string::npos)
      << p.status().message();
}

TEST_F(RealHostPlacementTest, HostsWithDifferentNumbersOfNicsAreRefused) {
  host({interface("eth0", {"10.0.0.1"}), interface("eth1", {"10.0.1.1"})});
  host({interface("eth0", {"10.0.0.2", "10.0.0.12"})});
  auto p = place(2);
  ASSERT_THAT(p, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_NE(p.status().message().find("same number of NICs"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("uses 2 (eth0, eth1)"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("has 1 that fit (eth0)"), std::string::npos) << p.status().message();
}

TEST_F(RealHostPlacementTest, ANamedInterfaceThatCannotCarryAFrameIsAnErrorAnUnnamedOneIsPassedOver) {
  host({interface("eth0", {"10.0.0.1"}, 576), interface("eth1", {"10.0.1.1"})});
  auto p = place(1);
  ASSERT_THAT(p, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_NE(p.status().message().find("interface eth0 has MTU 576"), std::string::npos) << p.status().message();

  scenario_.mutable_testbed()->clear_agents();
  agents_.clear();
  host({interface("eth0", {"10.0.0.1"}, 576), interface("nothing0", {}), interface("eth1", {"10.0.1.1"})},
       /*named=*/false);
  p = place(1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->nics_of_host.at(0)[0].interface, "eth1");
}

TEST_F(RealHostPlacementTest, NoInterfaceThatFitsSaysWhatEachLacks) {
  host({interface("eth0", {"10.0.0.1"}, 576), interface("nothing0", {})}, /*named=*/false);
  auto p = place(1);
  ASSERT_THAT(p, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_NE(p.status().message().find("no interface fits"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("nothing0 has no IPv4 address"), std::string::npos) << p.status().message();
}

TEST_F(RealHostPlacementTest, TwoRanksOnOneAddressAreRefused) {
  host({interface("eth0", {"10.0.0.1"})});
  host({interface("eth0", {"10.0.0.1"})});
  auto p = place(1);
  ASSERT_THAT(p, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_NE(p.status().message().find("ranks 0 and 1 would share address 10.0.0.1"), std::string::npos)
      << p.status().message();
}

TEST_F(RealHostPlacementTest, AfXdpOnANicThatCarriesTheControlConnectionIsRefused) {
  host({interface("eth0", {"10.0.0.1"}), interface("ctl0", {"192.0.2.1"})});
  auto p = place(2);
  ASSERT_THAT(p, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_NE(p.status().message().find("control address 192.0.2.1 is on ctl0"), std::string::npos)
      << p.status().message();
  scenario_.mutable_testbed()->set_port("af_packet");
  EXPECT_TRUE(place(2).ok());
}

// The example in configs: two hosts of two NICs, one rank on each NIC.
TEST_F(RealHostPlacementTest, TheTwoByTwoExamplePutsOneRankOnEachNic) {
  auto loaded = load_scenario(std::string(COLLIDE_CONFIGS_DIR) + "/real-hosts-2x2.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  scenario_ = *loaded;
  for (const v1::Agent& spec : scenario_.testbed().agents()) {
    AgentHandle a;
    a.index = static_cast<uint32_t>(agents_.size());
    a.host = spec.host();
    a.address = spec.address();
    v1::HostDescription d;
    for (int k = 0; k < spec.interfaces_size(); ++k) {
      *d.add_interfaces() = interface(spec.interfaces(k), {fmt::format("10.{}.0.{}", k, a.host + 1)}, 9000);
    }
    described_[a.index] = d;
    agents_.push_back(std::move(a));
  }
  auto p = place(scenario_.testbed().ranks_per_host());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->nics_per_host, 2u);
  EXPECT_EQ(addresses(*p), (std::vector<std::string>{"10.0.0.1@0", "10.1.0.1@0", "10.0.0.2@1", "10.1.0.2@1"}));
  EXPECT_EQ(p->nics_of_host.at(1)[1].port, "afpacket:ens1f1");
}

}  // namespace
}  // namespace collide::orchestrator
