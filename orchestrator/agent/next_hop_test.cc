// The next hop and its MAC as a real host's agent reads them from the kernel's tables.
#include "orchestrator/agent/next_hop.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::agent {
namespace {

constexpr uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return a << 24 | b << 16 | c << 8 | d;
}

// As /proc/net/route prints it (addresses as native-endian hex of network-order bytes): a
// default route via 10.1.0.254 and the on-link 10.1.0.0/24 on eth1, a /16 via 10.1.0.1 on eth1,
// and 192.0.2.0/24 on eth0.
const char* const kRoutes =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth1\t00000000\tFE00010A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    "eth1\t0000010A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    "eth1\t0000100A\t0100010A\t0003\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
    "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";

TEST(NextHop, APeerOnTheLinkIsItsOwnNextHop) {
  auto hop = next_hop_from_routes(kRoutes, "eth1", ip(10, 1, 0, 7));
  ASSERT_TRUE(hop.ok()) << hop.status().message();
  EXPECT_EQ(*hop, ip(10, 1, 0, 7));
}

TEST(NextHop, TheLongestPrefixWinsAndGivesItsGateway) {
  auto hop = next_hop_from_routes(kRoutes, "eth1", ip(10, 16, 3, 4));
  ASSERT_TRUE(hop.ok());
  EXPECT_EQ(*hop, ip(10, 1, 0, 1));
  hop = next_hop_from_routes(kRoutes, "eth1", ip(172, 16, 0, 1));
  ASSERT_TRUE(hop.ok());
  EXPECT_EQ(*hop, ip(10, 1, 0, 254));  // the default route
}

TEST(NextHop, OnlyRoutesOutOfTheInterfaceCount) {
  auto hop = next_hop_from_routes(kRoutes, "eth0", ip(10, 1, 0, 7));
  ASSERT_THAT(hop, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(hop.status().message().find("10.1.0.7"), std::string::npos);
  EXPECT_NE(hop.status().message().find("eth0"), std::string::npos);
  EXPECT_THAT(next_hop_from_routes(kRoutes, "eth9", ip(10, 1, 0, 7)),
              StatusIs(StatusCode::kNotFound));
}

const char* const kArp =
    "IP address       HW type     Flags       HW address            Mask     Device\n"
    "10.1.0.7         0x1         0x2         02:00:00:00:01:07     *        eth1\n"
    "10.1.0.8         0x1         0x0         00:00:00:00:00:00     *        eth1\n"
    "10.1.0.9         0x1         0x6         02:00:00:00:01:09     *        eth1\n"
    "10.1.0.7         0x1         0x2         02:00:00:00:99:99     *        eth2\n";

TEST(NextHop, OnlyCompleteNeighbourEntriesOfTheInterfaceGiveAMac) {
  EXPECT_EQ(mac_from_arp(kArp, "eth1", ip(10, 1, 0, 7)), "02:00:00:00:01:07");
  EXPECT_EQ(mac_from_arp(kArp, "eth2", ip(10, 1, 0, 7)), "02:00:00:00:99:99");
  EXPECT_EQ(mac_from_arp(kArp, "eth1", ip(10, 1, 0, 8)), std::nullopt);  // ARP still pending
  EXPECT_EQ(mac_from_arp(kArp, "eth1", ip(10, 1, 0, 9)), "02:00:00:00:01:09");  // permanent
  EXPECT_EQ(mac_from_arp(kArp, "eth1", ip(10, 1, 0, 10)), std::nullopt);
}

TEST(NextHop, AnUnresolvablePeerIsNamedWithItsInterface) {
  // Not IPv4 at all: refused before any table is read.
  auto mac = resolve_next_hop_mac("not-an-address", "eth1", std::chrono::milliseconds(10));
  ASSERT_THAT(mac, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(mac.status().message().find("not-an-address"), std::string::npos);
}

// A line whose numbers do not read (here a gateway and flags of a table gone wrong) is skipped;
// the lines after it still count.
TEST(NextHop, LinesWithUnreadableNumbersAreSkipped) {
  const std::string routes = std::string(
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
      "eth1\t0000100A\tZZ00010A\t0003\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
      "eth1\t0000010A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n");
  auto hop = next_hop_from_routes(routes, "eth1", ip(10, 1, 0, 7));
  ASSERT_TRUE(hop.ok()) << hop.status().message();
  EXPECT_EQ(*hop, ip(10, 1, 0, 7));
  EXPECT_THAT(next_hop_from_routes(routes, "eth1", ip(10, 16, 3, 4)),
              StatusIs(StatusCode::kNotFound));
  const char* const arp =
      "IP address       HW type     Flags       HW address            Mask     Device\n"
      "10.1.0.7         0x1         0xZ         02:00:00:00:01:07     *        eth1\n";
  EXPECT_EQ(mac_from_arp(arp, "eth1", ip(10, 1, 0, 7)), std::nullopt);
}

v1::RankEndpoint endpoint(uint32_t rank, uint32_t host, const std::string& ipv4) {
  v1::RankEndpoint e;
  e.set_rank(rank);
  e.set_host(host);
  e.set_ipv4(ipv4);
  return e;
}

// Two hosts of two NICs, one rank on each; a third host whose two ranks share one address would
// be refused by the placement, but the agent must still ask once per address.
const std::vector<v1::RankEndpoint> kRanks = {
    endpoint(0, 0, "10.0.0.1"), endpoint(1, 0, "10.0.1.1"), endpoint(2, 1, "10.0.0.2"),
    endpoint(3, 1, "10.0.1.2"), endpoint(4, 2, "10.0.0.3"), endpoint(5, 2, "10.0.0.3")};

TEST(PeerMacs, EachNicAsksOutOfItsOwnInterfaceForEveryRankOfTheOtherHosts) {
  std::vector<std::string> asked;
  auto macs = peer_macs_of_nics({"eth0", "eth1"}, 0, kRanks,
                                [&](const std::string& peer, const std::string& ifname) -> Result<std::string> {
                                  asked.push_back(peer + "@" + ifname);
                                  return "mac-of-" + peer + "-via-" + ifname;
                                });
  ASSERT_TRUE(macs.ok()) << macs.status().message();
  ASSERT_EQ(macs->size(), 2u);
  const std::map<uint32_t, std::string> nic1 = {{2, "mac-of-10.0.0.2-via-eth1"},
                                                {3, "mac-of-10.0.1.2-via-eth1"},
                                                {4, "mac-of-10.0.0.3-via-eth1"},
                                                {5, "mac-of-10.0.0.3-via-eth1"}};
  EXPECT_EQ((*macs)[1], nic1);
  EXPECT_EQ((*macs)[0].at(3), "mac-of-10.0.1.2-via-eth0");
  EXPECT_EQ((*macs)[0].count(0), 0u);  // its own ranks: never on the wire
  EXPECT_EQ((*macs)[0].count(1), 0u);
  // One question per address and NIC.
  EXPECT_EQ(asked, (std::vector<std::string>{"10.0.0.2@eth0", "10.0.1.2@eth0", "10.0.0.3@eth0",
                                             "10.0.0.2@eth1", "10.0.1.2@eth1", "10.0.0.3@eth1"}));
}

TEST(PeerMacs, APeerThatCannotBeResolvedIsNamedWithTheNicThatAsked) {
  auto macs = peer_macs_of_nics({"eth0", "eth1"}, 1, kRanks,
                                [](const std::string& peer, const std::string& ifname) -> Result<std::string> {
                                  if (ifname == "eth1" && peer == "10.0.0.3") return unavailable("no ARP answer");
                                  return std::string("02:00:00:00:00:01");
                                });
  ASSERT_THAT(macs, StatusIs(StatusCode::kUnavailable));
  EXPECT_NE(macs.status().message().find("host 1 NIC 1 (eth1), peer rank 4 on host 2"), std::string::npos)
      << macs.status().message();
  EXPECT_NE(macs.status().message().find("no ARP answer"), std::string::npos) << macs.status().message();
}

}  // namespace
}  // namespace collide::orchestrator::agent
