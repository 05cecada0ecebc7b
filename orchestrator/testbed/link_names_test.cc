#include "orchestrator/testbed/link_names.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::testbed {
namespace {

HostLinkName parsed(const std::string& link) {
  auto name = parse_host_link(link);
  EXPECT_TRUE(name.ok()) << link << ": " << name.status().to_string();
  EXPECT_TRUE(name.ok() && name->has_value()) << link;
  return name.ok() && name->has_value() ? **name : HostLinkName{};
}

TEST(LinkNamesTest, HostLinksNameAHostAndOneOfItsNics) {
  const HostLinkName nic = parsed("h1.nic3");
  EXPECT_EQ(nic.host, 1u);
  EXPECT_EQ(nic.nic, 3u);
  EXPECT_TRUE(nic.nic_named);
  const HostLinkName eth = parsed("h12.eth2");
  EXPECT_EQ(eth.host, 12u);
  EXPECT_EQ(eth.nic, 2u);
  // A host alone is its NIC 0.
  const HostLinkName bare = parsed("h4");
  EXPECT_EQ(bare.host, 4u);
  EXPECT_EQ(bare.nic, 0u);
  EXPECT_FALSE(bare.nic_named);
  EXPECT_EQ(host_nic_name(1, 2), "h1.nic2");
  EXPECT_EQ(parsed(host_nic_name(7, 5)).nic, 5u);
}

TEST(LinkNamesTest, OtherNamesAreNotHostLinks) {
  for (const char* link : {"leaf0-spine1", "spine0", "h1.nic", "h1.port2", "hx", "h1.nic2.x", ""}) {
    auto name = parse_host_link(link);
    ASSERT_TRUE(name.ok()) << link;
    EXPECT_FALSE(name->has_value()) << link;
  }
}

TEST(LinkNamesTest, NumbersTooLargeAreErrorsNamingTheLink) {
  auto host = parse_host_link("h99999999999");
  ASSERT_THAT(host, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(host.status().message().find("link 'h99999999999': host"), std::string::npos);
  auto nic = parse_host_link("h1.nic99999999999");
  ASSERT_THAT(nic, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(nic.status().message().find("link 'h1.nic99999999999': NIC"), std::string::npos);
}

TEST(LinkNamesTest, CheckSaysWhichHostsAndNicsThereAre) {
  EXPECT_TRUE(check_host_link("h3.nic3", parsed("h3.nic3"), 4, 4).ok());
  Status nic = check_host_link("h1.nic4", parsed("h1.nic4"), 4, 4);
  EXPECT_EQ(nic.message(), "no link 'h1.nic4': host 1's NICs are nic0..nic3");
  Status host = check_host_link("h4", parsed("h4"), 4, 4);
  EXPECT_EQ(host.message(), "no link 'h4': the testbed's hosts are h0..h3");
}

}  // namespace
}  // namespace collide::orchestrator::testbed
