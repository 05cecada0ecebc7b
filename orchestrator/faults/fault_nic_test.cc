// Which of a real host's NICs a fault on one of its links acts on.
#include "orchestrator/faults/fault_nic.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::faults {
namespace {

v1::Fault on(const std::string& link) {
  v1::Fault f;
  f.set_name("f");
  f.set_link(link);
  return f;
}

const std::vector<std::string> kNics = {"ens1f0", "ens1f1", "ens2f0"};

TEST(OwnNicOfFault, NicKIsTheKthInterfaceInRailOrder) {
  EXPECT_EQ(own_nic_of_fault(on("h1.nic0"), kNics).value(), "ens1f0");
  EXPECT_EQ(own_nic_of_fault(on("h1.nic2"), kNics).value(), "ens2f0");
}

TEST(OwnNicOfFault, ABareHostIsItsFirstNic) {
  EXPECT_EQ(own_nic_of_fault(on("h1"), kNics).value(), "ens1f0");
}

TEST(OwnNicOfFault, AnInterfaceMayBeNamedAsItIs) {
  EXPECT_EQ(own_nic_of_fault(on("h1.ens1f1"), kNics).value(), "ens1f1");
}

TEST(OwnNicOfFault, ANicTheHostDoesNotHaveIsNamedWithTheOnesItHas) {
  auto nic = own_nic_of_fault(on("h1.nic3"), kNics);
  ASSERT_THAT(nic, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(nic.status().message().find("no NIC 3: this host's NICs are h1.nic0 to h1.nic2 (ens1f0, ens1f1, ens2f0)"),
            std::string::npos)
      << nic.status().message();
  nic = own_nic_of_fault(on("h1.eth7"), kNics);
  ASSERT_THAT(nic, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(nic.status().message().find("names neither a NIC nor an interface"), std::string::npos)
      << nic.status().message();
  EXPECT_THAT(own_nic_of_fault(on("h1.nicX"), kNics), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(own_nic_of_fault(on("h1"), {}), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::orchestrator::faults
