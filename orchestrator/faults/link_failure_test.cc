// The pure parts of a link failure's phases: where routing converges to, and the loss counter.
#include "orchestrator/faults/link_failure.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/leaf_spine_spec.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::faults {
namespace {

// 3 leaves of 2 hosts each (host h under leaf h % 3), 3 spines.
testbed::TestbedPlan three_leaves() {
  return *testbed::plan_testbed(testing::leaf_spine_spec("lf", 6, 3, 3));
}

std::string address(const testbed::TestbedPlan& plan, const std::string& from, const std::string& to) {
  for (const testbed::PlannedLink& l : plan.links) {
    if (l.a.netns == from && l.b.netns == to) return l.b.address.substr(0, l.b.address.find('/'));
  }
  return "";
}

TEST(LinkFailureTest, OtherLeavesRouteTheFailedLeafsHostsAroundItsSpine) {
  const auto plan = three_leaves();
  auto site = resolve_site(plan, "leaf0-spine1", v1::Fault::DIRECTION_BOTH);
  ASSERT_TRUE(site.ok()) << site.status().to_string();
  const std::vector<testbed::PlannedRoute> routes = converged_routes(plan, *site);
  // Leaf 0's two hosts' prefixes, on leaves 1 and 2 each, over spines 0 and 2.
  ASSERT_EQ(routes.size(), 4u);
  std::set<std::string> prefixes;
  for (const testbed::PlannedRoute& r : routes) {
    EXPECT_NE(r.netns, "lf-leaf0");
    prefixes.insert(r.prefix);
    const std::vector<std::string> kept = {address(plan, r.netns, "lf-spine0"), address(plan, r.netns, "lf-spine2")};
    EXPECT_EQ(r.via, kept) << r.netns << " " << r.prefix;
  }
  // Exactly the prefixes spine 1 reached through the failed link: those of hosts 0 and 3.
  std::set<std::string> expected;
  for (const testbed::HostNic& n : plan.nics) {
    if (n.host % 3 == 0) expected.insert(n.rank_subnet);
  }
  EXPECT_EQ(prefixes, expected);
}

TEST(LinkFailureTest, ALeafLeftWithoutASpineGetsNoRoute) {
  v1::VirtualTestbedSpec spec = testing::leaf_spine_spec("one", 2, 2, 1);
  const auto plan = *testbed::plan_testbed(spec);
  auto site = resolve_site(plan, "leaf0-spine0", v1::Fault::DIRECTION_BOTH);
  ASSERT_TRUE(site.ok());
  EXPECT_TRUE(converged_routes(plan, *site).empty());
}

TEST(LinkFailureTest, ReadsInNoRoutesFromTheIpExtLinesOfNetstat) {
  const std::string netstat =
      "TcpExt: SyncookiesSent SyncookiesRecv\nTcpExt: 0 0\n"
      "IpExt: InNoRoutes InTruncatedPkts InMcastPkts OutMcastPkts InBcastPkts OutBcastPkts InOctets\n"
      "IpExt: 77 0 0 0 0 0 222533925\n"
      "MPTcpExt: MPCapableSYNRX\nMPTcpExt: 0\n";
  auto count = in_no_routes(netstat);
  ASSERT_TRUE(count.ok()) << count.status().to_string();
  EXPECT_EQ(*count, 77u);
  // Missing, unpaired or unreadable: refused, not taken as zero.
  EXPECT_THAT(in_no_routes("TcpExt: SyncookiesSent\nTcpExt: 0\n"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(in_no_routes("IpExt: InNoRoutes InOctets\n"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(in_no_routes("IpExt: InOctets\nIpExt: 5\n"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(in_no_routes("IpExt: InNoRoutes InOctets\nIpExt: x 5\n"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(LinkFailureTest, PhaseWindowsAreNamedAfterTheirFault) {
  EXPECT_EQ(phase_name("spine-fail", kDetectionPhase), "spine-fail/detection");
  EXPECT_EQ(phase_name("spine-fail", kConvergedPhase), "spine-fail/converged");
}

}  // namespace
}  // namespace collide::orchestrator::faults
