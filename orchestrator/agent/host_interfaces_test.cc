// What an agent reports of its interfaces: the link speed, read from a sysfs tree this test writes.
#include "orchestrator/agent/host_interfaces.h"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace collide::orchestrator::agent {
namespace {

class LinkSpeed : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("collide-sysfs-" + std::to_string(getpid()));
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // An interface directory as the kernel shows it: its MAC, and its speed unless `speed` is null.
  void device(const std::string& name, const std::string& mac, const char* speed) {
    std::filesystem::create_directories(root_ / name);
    std::ofstream(root_ / name / "address") << mac << "\n";
    if (speed != nullptr) std::ofstream(root_ / name / "speed") << speed << "\n";
  }

  std::filesystem::path root_;
};

TEST_F(LinkSpeed, ReadsTheKernelsFigureInMegabitsPerSecond) {
  device("eth0", "02:00:00:00:00:01", "400000");
  EXPECT_EQ(link_speed_mbps(root_, "eth0", "02:00:00:00:00:01"), 400000u);
  EXPECT_EQ(link_speed_mbps(root_, "eth0", ""), 400000u);  // no MAC to compare: taken as it is
}

TEST_F(LinkSpeed, NoLinkOrNoFileOrNoNumberIsUnknown) {
  device("down0", "02:00:00:00:00:02", "-1");
  device("nospeed0", "02:00:00:00:00:03", nullptr);
  device("odd0", "02:00:00:00:00:04", "fast");
  device("huge0", "02:00:00:00:00:05", "99999999999");
  EXPECT_EQ(link_speed_mbps(root_, "down0", ""), 0u);
  EXPECT_EQ(link_speed_mbps(root_, "nospeed0", ""), 0u);
  EXPECT_EQ(link_speed_mbps(root_, "odd0", ""), 0u);
  EXPECT_EQ(link_speed_mbps(root_, "huge0", ""), 0u);
  EXPECT_EQ(link_speed_mbps(root_, "absent0", ""), 0u);
}

TEST_F(LinkSpeed, AnEntryOfAnotherNamespacesDeviceOfTheSameNameIsNotTaken) {
  device("eth0", "02:00:00:00:00:01", "100000");
  EXPECT_EQ(link_speed_mbps(root_, "eth0", "02:00:00:00:00:99"), 0u);
}

TEST_F(LinkSpeed, TheHostDescriptionCarriesEachInterfacesSpeed) {
  // Loopback exists in every namespace, with an all-zero MAC.
  device("lo", "00:00:00:00:00:00", "25000");
  auto d = describe_host({"lo"}, {}, root_);
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->interfaces_size(), 1);
  EXPECT_EQ(d->interfaces(0).name(), "lo");
  EXPECT_EQ(d->interfaces(0).mac(), "00:00:00:00:00:00");
  EXPECT_EQ(d->interfaces(0).speed_mbps(), 25000u);
}

}  // namespace
}  // namespace collide::orchestrator::agent
