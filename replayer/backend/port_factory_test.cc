// Port specs that cannot open say why, before touching any device.
#include "replayer/backend/port_factory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "replayer/backend/engine_thread.h"
#include "tests/support/status_matchers.h"

namespace collide::replayer::backend {
namespace {

TEST(PortFactoryTest, UnknownKindNamesTheKindsThereAre) {
  auto port = open_port("ring:x", 0);
  ASSERT_THAT(port, StatusIs(StatusCode::kInvalidArgument));
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

namespace fs = std::filesystem;

// A sysfs tree in a temporary folder with PCI device 0000:3b:00.0 bound to `driver` and
// `hugepages` 2 MiB pages reserved; removed when the test ends.
class FakePciSysfs {
 public:
  FakePciSysfs(const std::string& driver, int hugepages)
      : root_(fs::temp_directory_path() / ("collide-factory-sysfs-" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
    const fs::path dev = root_ / "bus/pci/devices/0000:3b:00.0";
    fs::create_directories(dev / "net/ens1f0");
    fs::create_directories(root_ / "bus/pci/drivers" / driver);
    fs::create_directory_symlink(fs::path("../../../bus/pci/drivers") / driver, dev / "driver");
    fs::create_directories(root_ / "kernel/mm/hugepages/hugepages-2048kB");
    std::ofstream(root_ / "kernel/mm/hugepages/hugepages-2048kB/nr_hugepages") << hugepages << "\n";
  }
  ~FakePciSysfs() { fs::remove_all(root_); }
  PortOptions options() const {
    PortOptions o;
    o.sysfs_root = root_;
    return o;
  }

 private:
  fs::path root_;
};

// A PCI device's driver is checked before the EAL starts (which needs root and would probe it):
// one left on its kernel driver is refused with how to bind it, and nothing is opened.
TEST(PortFactoryTest, PciDeviceOnAKernelDriverIsRefusedBeforeTheEal) {
  if (!dpdk_available()) GTEST_SKIP() << "this build is without DPDK";
  const FakePciSysfs sysfs("i40e", 1024);
  auto ports =
      open_ports({"dpdk:net_null0", "dpdk:0000:3b:00.0,rx_low_latency=1"}, sysfs.options());
  ASSERT_THAT(ports, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_EQ(ports.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ports.status().message().find("kernel driver 'i40e'"), std::string::npos)
      << ports.status().message();
  EXPECT_NE(ports.status().message().find("dpdk-devbind.py --bind=vfio-pci 0000:3b:00.0"),
            std::string::npos)
      << ports.status().message();
}

// A PCI NIC on vfio-pci takes hugepages: with none reserved, the error says so before the EAL
// fails deep in its start-up.
TEST(PortFactoryTest, PciDeviceWithoutHugepagesSaysToReserveThem) {
  if (!dpdk_available()) GTEST_SKIP() << "this build is without DPDK";
  const FakePciSysfs sysfs("vfio-pci", 0);
  auto ports = open_ports({"dpdk:0000:3b:00.0"}, sysfs.options());
  ASSERT_THAT(ports, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_EQ(ports.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ports.status().message().find("none are reserved"), std::string::npos)
      << ports.status().message();
}

// Engine threads of a process without DPDK ports (kernel sockets only) have nothing to register.
TEST(PortFactoryTest, EngineThreadsNeedNoRegistrationWithoutDpdkPorts) {
  Status registered;
  std::thread engine([&] {
    registered = register_engine_thread();
    unregister_engine_thread();
  });
  engine.join();
  EXPECT_TRUE(registered.ok()) << registered.to_string();
}

TEST(PortFactoryTest, MalformedPciAddressNamesThePort) {
  if (!dpdk_available()) GTEST_SKIP() << "this build is without DPDK";
  auto ports = open_ports({"dpdk:net_null0", "dpdk:0000:3b:00"}, PortOptions{});
  ASSERT_THAT(ports, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(ports.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ports.status().message().find("port 'dpdk:0000:3b:00'"), std::string::npos)
      << ports.status().message();
}

}  // namespace
}  // namespace collide::replayer::backend
