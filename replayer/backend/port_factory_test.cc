// Port specs that cannot open say why, before touching any device.
#include "replayer/backend/port_factory.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace collide::replayer::backend {
namespace {

TEST(PortFactoryTest, UnknownKindNamesTheKindsThereAre) {
  auto port = open_port("ring:x", 0);
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(port.status().message().find("want dpdk:<device>"), std::string::npos)
      << port.status().message();
}

// Built with -DCOLLIDE_WITH_DPDK=OFF, a DPDK port is refused with a message naming the option.
// (With DPDK, opening one starts the EAL, which needs root: the privileged DPDK tests cover it.)
TEST(PortFactoryTest, DpdkPortWithoutDpdkSaysTheBuildLacksIt) {
  if (dpdk_available()) GTEST_SKIP() << "this build has DPDK";
  auto port = open_port("dpdk:net_null0", 0);
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("without DPDK (-DCOLLIDE_WITH_DPDK=OFF)"),
            std::string::npos)
      << port.status().message();
}

// A PCI device's driver is checked before the EAL starts (which needs root and would probe it):
// one left on its kernel driver is refused with how to bind it, and nothing is opened.
TEST(PortFactoryTest, PciDeviceOnAKernelDriverIsRefusedBeforeTheEal) {
  if (!dpdk_available()) GTEST_SKIP() << "this build is without DPDK";
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("collide-factory-sysfs-" + std::to_string(::getpid()));
  const fs::path dev = root / "bus/pci/devices/0000:3b:00.0";
  fs::create_directories(dev / "net/ens1f0");
  fs::create_directories(root / "bus/pci/drivers/i40e");
  fs::create_directory_symlink("../../../bus/pci/drivers/i40e", dev / "driver");
  PortOptions options;
  options.sysfs_root = root;
  auto ports = open_ports({"dpdk:net_null0", "dpdk:0000:3b:00.0,rx_low_latency=1"}, options);
  fs::remove_all(root);
  ASSERT_FALSE(ports.ok());
  EXPECT_EQ(ports.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ports.status().message().find("kernel driver 'i40e'"), std::string::npos)
      << ports.status().message();
  EXPECT_NE(ports.status().message().find("dpdk-devbind.py --bind=vfio-pci 0000:3b:00.0"),
            std::string::npos)
      << ports.status().message();
}

TEST(PortFactoryTest, MalformedPciAddressNamesThePort) {
  if (!dpdk_available()) GTEST_SKIP() << "this build is without DPDK";
  auto ports = open_ports({"dpdk:net_null0", "dpdk:0000:3b:00"}, PortOptions{});
  ASSERT_FALSE(ports.ok());
  EXPECT_EQ(ports.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ports.status().message().find("port 'dpdk:0000:3b:00'"), std::string::npos)
      << ports.status().message();
}

}  // namespace
}  // namespace collide::replayer::backend
