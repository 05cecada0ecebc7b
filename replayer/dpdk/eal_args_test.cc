#include "replayer/dpdk/eal_args.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "replayer/dpdk/eal.h"
#include "tests/support/status_matchers.h"

namespace collide::replayer::dpdk {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

DeviceSpec device(std::string_view text) {
  auto d = parse_device(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status().to_string();
  return d.ok() ? *d : DeviceSpec{};
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(ParseDeviceTest, PciAddressesInFullAndShortFormWithDevargs) {
  EXPECT_EQ(device("0000:3b:00.0"), (DeviceSpec{true, "0000:3b:00.0", ""}));
  EXPECT_EQ(device("3B:00.1"), (DeviceSpec{true, "0000:3b:00.1", ""}));
  EXPECT_EQ(device("0000:af:1f.7,rxq_cqe_comp_en=0,txq_inline_max=0"),
            (DeviceSpec{true, "0000:af:1f.7", "rxq_cqe_comp_en=0,txq_inline_max=0"}));
  // VMD domains have five digits.
  EXPECT_EQ(device("10000:01:00.0").name, "10000:01:00.0");
  EXPECT_EQ(device("0000:3b:00.0,rxq_cqe_comp_en=0").probe_string(),
            "0000:3b:00.0,rxq_cqe_comp_en=0");
}

TEST(ParseDeviceTest, NamesWithoutColonAreVirtualDevices) {
  EXPECT_EQ(device("net_null0"), (DeviceSpec{false, "net_null0", ""}));
  EXPECT_EQ(device("net_af_xdp0,iface=veth0,start_queue=0"),
            (DeviceSpec{false, "net_af_xdp0", "iface=veth0,start_queue=0"}));
}

TEST(ParseDeviceTest, MalformedPciAddressesSayWhatIsWrong) {
  struct Case {
    std::string_view text;
    std::string_view says;
  };
  for (const Case& c : {Case{"0000:3b:00", "device.function"}, Case{"0000:3g:00.0", "bus"},
                        Case{"0000:100:00.0", "bus 0x100 is above 0xff"},
                        Case{"0000:3b:20.0", "device 0x20 is above 0x1f"},
                        Case{"0000:3b:00.8", "function 0x8 is above 0x7"},
                        Case{"0000:3b:00.", "function '' is not"},
                        Case{"1:2:3:4.0", "domain:bus:device.function"},
                        Case{"0000:-1:00.0", "bus"}, Case{",iface=x", "no name"},
                        Case{"net null0", "space"}}) {
    auto d = parse_device(c.text);
    ASSERT_THAT(d, StatusIs(StatusCode::kInvalidArgument)) << c.text;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(contains(d.status().message(), c.says)) << c.text << ": " << d.status().message();
  }
}

TEST(EalArgsTest, VirtualDevicesKeepHeapMemoryWithoutPci) {
  const std::vector<DeviceSpec> devices = {device("net_af_xdp0,iface=a"),
                                           device("net_af_xdp1,iface=b")};
  auto args = eal_args_for(devices, v1::DpdkPortConfig{}, 1);
  ASSERT_TRUE(args.ok()) << args.status().to_string();
  EXPECT_EQ(*args, (Args{"--no-pci", "--no-huge", "--no-shconf", "--no-telemetry", "-m", "1024",
                         "-l", "1"}));
  // The same list the virtual-device helper gives.
  EXPECT_EQ(*args, virtual_device_eal_args(1, 1024));
}

TEST(EalArgsTest, PciDevicesAreAllowlistedWithHugepages) {
  v1::DpdkPortConfig config;
  config.add_eal_args("--log-level=pmd.net.mlx5:8");
  const std::vector<DeviceSpec> devices = {device("0000:3b:00.0,rxq_cqe_comp_en=0"),
                                           device("net_null0"), device("0000:86:00.1")};
  auto args = eal_args_for(devices, config, 2);
  ASSERT_TRUE(args.ok()) << args.status().to_string();
  EXPECT_EQ(*args, (Args{"-a", "0000:3b:00.0,rxq_cqe_comp_en=0", "-a", "0000:86:00.1",
                         "--in-memory", "--no-telemetry", "-l", "2",
                         "--log-level=pmd.net.mlx5:8"}));
}

TEST(EalArgsTest, MemoryModeOverridesTheDevicesChoice) {
  v1::DpdkPortConfig heap;
  heap.set_eal_memory(v1::DpdkPortConfig::EAL_MEMORY_HEAP);
  heap.set_eal_heap_mb(2048);
  auto args = eal_args_for(std::vector<DeviceSpec>{device("0000:3b:00.0")}, heap, 0);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args, (Args{"-a", "0000:3b:00.0", "--no-huge", "--no-shconf", "--no-telemetry", "-m",
                         "2048", "-l", "0"}));

  v1::DpdkPortConfig huge;
  huge.set_eal_memory(v1::DpdkPortConfig::EAL_MEMORY_HUGEPAGES);
  args = eal_args_for(std::vector<DeviceSpec>{device("net_null0")}, huge, 0);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args, (Args{"--no-pci", "--in-memory", "--no-telemetry", "-l", "0"}));
}

TEST(EalArgsTest, RefusesADeviceNamedTwiceAndABadLcore) {
  auto args = eal_args_for(
      std::vector<DeviceSpec>{device("0000:3b:00.0"), device("3b:00.0,txq_inline_max=0")},
      v1::DpdkPortConfig{}, 0);
  ASSERT_THAT(args, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_TRUE(contains(args.status().message(), "'0000:3b:00.0' is named by two ports"))
      << args.status().message();
  EXPECT_THAT(eal_args_for({}, v1::DpdkPortConfig{}, -1), StatusIs(StatusCode::kInvalidArgument));
  v1::DpdkPortConfig odd;
  odd.set_eal_memory(static_cast<v1::DpdkPortConfig::EalMemory>(7));
  EXPECT_THAT(eal_args_for({}, odd, 0), StatusIs(StatusCode::kInvalidArgument));
}

// A sysfs tree of PCI devices in a temporary folder: <root>/bus/pci/devices/<address>, with a
// driver link, network interfaces and an RDMA device as the kernel shows them.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("collide-sysfs-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "bus/pci/drivers");
  }
  void TearDown() override { fs::remove_all(root_); }

  void add_device(const std::string& address, const std::string& driver,
                  const std::string& interface = "", bool rdma = false) {
    const fs::path dev = root_ / "bus/pci/devices" / address;
    fs::create_directories(dev);
    if (!driver.empty()) {
      fs::create_directories(root_ / "bus/pci/drivers" / driver);
      fs::create_directory_symlink(fs::path("../../../bus/pci/drivers") / driver, dev / "driver");
    }
    if (!interface.empty()) fs::create_directories(dev / "net" / interface);
    if (rdma) fs::create_directories(dev / "infiniband/mlx5_0");
  }
  Status check(std::string_view spec) { return check_device_driver(device(spec), root_); }

  fs::path root_;
};

TEST_F(FakeSysfs, DevicesOnVfioOrUioPass) {
  add_device("0000:3b:00.0", "vfio-pci");
  add_device("0000:3b:00.1", "uio_pci_generic");
  EXPECT_TRUE(check("0000:3b:00.0").ok());
  EXPECT_TRUE(check("3b:00.1,some_arg=1").ok());
  EXPECT_TRUE(check("net_null0").ok());  // virtual devices have no sysfs entry to check
}

TEST_F(FakeSysfs, KernelDriverNeedsVfioBinding) {
  add_device("0000:3b:00.0", "ice", "ens1f0");
  const Status s = check("0000:3b:00.0");
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(s.message(), "kernel driver 'ice'")) << s.message();
  EXPECT_TRUE(contains(s.message(), "interface ens1f0")) << s.message();
  EXPECT_TRUE(contains(s.message(), "dpdk-devbind.py --bind=vfio-pci 0000:3b:00.0"))
      << s.message();
}

TEST_F(FakeSysfs, UnboundDeviceNeedsVfioBinding) {
  add_device("0000:5e:00.0", "");
  const Status s = check("0000:5e:00.0");
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(s.message(), "bound to no driver")) << s.message();
  EXPECT_TRUE(contains(s.message(), "--bind=vfio-pci 0000:5e:00.0")) << s.message();
}

TEST_F(FakeSysfs, Mlx5StaysOnItsDriverButNeedsItsRdmaDevice) {
  add_device("0000:af:00.0", "mlx5_core", "ens6f0np0", /*rdma=*/true);
  add_device("0000:af:00.1", "mlx5_core", "ens6f1np1", /*rdma=*/false);
  EXPECT_TRUE(check("0000:af:00.0,rxq_cqe_comp_en=0").ok());
  const Status s = check("0000:af:00.1");
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(s.message(), "ibverbs")) << s.message();
  EXPECT_TRUE(contains(s.message(), "mlx5_ib")) << s.message();
  EXPECT_TRUE(contains(s.message(), "rdma-core")) << s.message();
}

TEST_F(FakeSysfs, MissingDeviceIsNotFound) {
  const Status s = check("0000:01:00.0");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(s.message(), "0000:01:00.0")) << s.message();
}

TEST_F(FakeSysfs, HugepagesMustBeReservedWhenTheEalTakesThem) {
  const fs::path pages = root_ / "kernel/mm/hugepages";
  fs::create_directories(pages / "hugepages-2048kB");
  fs::create_directories(pages / "hugepages-1048576kB");
  std::ofstream(pages / "hugepages-2048kB/nr_hugepages") << "0\n";
  std::ofstream(pages / "hugepages-1048576kB/nr_hugepages") << "0\n";
  Status s = check_hugepages_reserved(root_);
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(s.message(), "hugepages-2048kB/nr_hugepages")) << s.message();
  EXPECT_TRUE(contains(s.message(), "EAL_MEMORY_HEAP")) << s.message();

  std::ofstream(pages / "hugepages-1048576kB/nr_hugepages") << "4\n";
  EXPECT_TRUE(check_hugepages_reserved(root_).ok());
  std::ofstream(pages / "hugepages-2048kB/nr_hugepages") << "12x\n";
  s = check_hugepages_reserved(root_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "hugepages-2048kB/nr_hugepages")) << s.message();

  const std::vector<DeviceSpec> pci = {device("0000:3b:00.0")};
  EXPECT_TRUE(uses_hugepages(pci, v1::DpdkPortConfig{}));
  EXPECT_FALSE(uses_hugepages(std::vector<DeviceSpec>{device("net_null0")}, v1::DpdkPortConfig{}));
}

}  // namespace
}  // namespace collide::replayer::dpdk
