#include "replayer/dpdk/eal_args.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "common/parse_number.h"
#include "replayer/dpdk/port_defaults.h"

namespace collide::replayer::dpdk {
namespace {

namespace fs = std::filesystem;

// One hexadecimal field of a PCI address, checked against its width in the address.
Result<uint32_t> pci_field(std::string_view text, std::string_view what, uint32_t max,
                           std::string_view address) {
  if (text.empty() || text.size() > 8) {
    return invalid_argument(fmt::format("PCI address '{}': the {} '{}' is not 1 to 8 hex digits",
                                        address, what, text));
  }
  auto value = parse_number<uint32_t>(text, fmt::format("PCI address '{}' {}", address, what), 16);
  if (!value.ok()) return value.status();
  if (*value > max) {
    return invalid_argument(fmt::format("PCI address '{}': {} {:#x} is above {:#x}", address, what,
                                        *value, max));
  }
  return *value;
}

// "DDDD:BB:DD.F" or "BB:DD.F", in full form.
Result<std::string> parse_pci_address(std::string_view text) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() != 2 && parts.size() != 3) {
    return invalid_argument(fmt::format(
        "PCI address '{}': want domain:bus:device.function, e.g. 0000:3b:00.0", text));
  }
  const std::string_view dev_fn = parts.back();
  const size_t dot = dev_fn.find('.');
  if (dot == std::string_view::npos) {
    return invalid_argument(fmt::format(
        "PCI address '{}': '{}' is not device.function (e.g. 00.0)", text, dev_fn));
  }
  uint32_t domain = 0;
  if (parts.size() == 3) {
    auto d = pci_field(parts[0], "domain", 0xffffffff, text);
    if (!d.ok()) return d.status();
    domain = *d;
  }
  auto bus = pci_field(parts[parts.size() - 2], "bus", 0xff, text);
  if (!bus.ok()) return bus.status();
  auto device = pci_field(dev_fn.substr(0, dot), "device", 0x1f, text);
  if (!device.ok()) return device.status();
  auto function = pci_field(dev_fn.substr(dot + 1), "function", 0x7, text);
  if (!function.ok()) return function.status();
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, *bus, *device, *function);
}

constexpr std::array<std::string_view, 3> kMappingDrivers = {"vfio-pci", "uio_pci_generic",
                                                             "igb_uio"};
constexpr std::array<std::string_view, 2> kBifurcatedDrivers = {"mlx5_core", "mlx4_core"};

// The basename of what a sysfs symlink points to; empty if it is absent.
std::string link_target_name(const fs::path& link) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(link, ec);
  return ec ? std::string() : target.filename().string();
}

// The kernel's network interfaces on the device (<dev>/net/*), for the error message.
std::string interfaces_of(const fs::path& dev) {
  std::string names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dev / "net", ec)) {
    names += (names.empty() ? "" : ", ") + entry.path().filename().string();
  }
  return names;
}

}  // namespace

std::string DeviceSpec::probe_string() const {
  return devargs.empty() ? name : name + "," + devargs;
}

Result<DeviceSpec> parse_device(std::string_view device) {
  const size_t comma = device.find(',');
  const std::string_view name = device.substr(0, comma);
  DeviceSpec spec;
  if (comma != std::string_view::npos) spec.devargs = std::string(device.substr(comma + 1));
  if (name.empty()) {
    return invalid_argument(fmt::format("DPDK device '{}' has no name before its arguments", device));
  }
  if (std::any_of(name.begin(), name.end(), [](char c) { return c == ' ' || c == '\t'; })) {
    return invalid_argument(fmt::format("DPDK device name '{}' contains a space", name));
  }
  if (name.find(':') == std::string_view::npos) {
    spec.name = std::string(name);
    return spec;
  }
  auto address = parse_pci_address(name);
  if (!address.ok()) return address.status();
  spec.pci = true;
  spec.name = std::move(address).value();
  return spec;
}

bool uses_hugepages(std::span<const DeviceSpec> devices, const v1::DpdkPortConfig& config) {
  switch (config.eal_memory()) {
    case v1::DpdkPortConfig::EAL_MEMORY_HUGEPAGES: return true;
    case v1::DpdkPortConfig::EAL_MEMORY_HEAP: return false;
    default:
      return std::any_of(devices.begin(), devices.end(), [](const DeviceSpec& d) { return d.pci; });
  }
}

Status check_hugepages_reserved(const fs::path& sysfs_root) {
  const fs::path dir = sysfs_root / "kernel/mm/hugepages";
  uint64_t pages = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path file = entry.path() / "nr_hugepages";
    std::ifstream in(file);
    std::string text;
    if (!(in >> text)) continue;
    auto n = parse_number<uint64_t>(text, file.string());
    if (!n.ok()) return n.status();
    pages += *n;
  }
  if (pages > 0) return {};
  return failed_precondition(fmt::format(
      "the DPDK EAL takes hugepages for PCI NICs, and none are reserved ({}/*/nr_hugepages): "
      "reserve some, e.g. echo 2048 > {}/hugepages-2048kB/nr_hugepages, or set the port's "
      "eal_memory to EAL_MEMORY_HEAP",
      dir.string(), dir.string()));
}

Result<std::vector<std::string>> eal_args_for(std::span<const DeviceSpec> devices,
                                              const v1::DpdkPortConfig& config, int main_lcore) {
  if (main_lcore < 0) return invalid_argument(fmt::format("EAL main lcore {} is negative", main_lcore));
  for (size_t i = 0; i < devices.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (devices[i].name == devices[j].name) {
        return invalid_argument(fmt::format("DPDK device '{}' is named by two ports",
                                            devices[i].name));
      }
    }
  }
  const bool any_pci =
      std::any_of(devices.begin(), devices.end(), [](const DeviceSpec& d) { return d.pci; });
  if (!v1::DpdkPortConfig::EalMemory_IsValid(config.eal_memory())) {
    return invalid_argument(fmt::format("DpdkPortConfig.eal_memory {} is not a known value",
                                        static_cast<int>(config.eal_memory())));
  }
  const bool hugepages = uses_hugepages(devices, config);
  std::vector<std::string> args;
  if (any_pci) {
    for (const DeviceSpec& d : devices) {
      if (!d.pci) continue;
      args.push_back("-a");
      args.push_back(d.probe_string());
    }
  } else {
    args.push_back("--no-pci");
  }
  if (hugepages) {
    // Hugepages without files in the hugetlbfs mount: nothing is left behind, and processes on
    // other devices can run beside this one.
    args.push_back("--in-memory");
    args.push_back("--no-telemetry");
  } else {
    // No shared runtime folder either, so several processes can run side by side.
    const uint32_t mb = config.eal_heap_mb() != 0 ? config.eal_heap_mb() : kDefaultEalHeapMb;
    for (std::string a : {"--no-huge", "--no-shconf", "--no-telemetry", "-m"}) args.push_back(a);
    args.push_back(std::to_string(mb));
  }
  args.push_back("-l");
  args.push_back(std::to_string(main_lcore));
  args.insert(args.end(), config.eal_args().begin(), config.eal_args().end());
  return args;
}

std::vector<std::string> virtual_device_eal_args(int main_lcore, int memory_mb) {
  v1::DpdkPortConfig config;
  config.set_eal_memory(v1::DpdkPortConfig::EAL_MEMORY_HEAP);
  config.set_eal_heap_mb(static_cast<uint32_t>(std::max(memory_mb, 1)));
  return *eal_args_for({}, config, std::max(main_lcore, 0));
}

bool is_dpdk_usable_driver(std::string_view driver) {
  return std::find(kMappingDrivers.begin(), kMappingDrivers.end(), driver) !=
             kMappingDrivers.end() ||
         std::find(kBifurcatedDrivers.begin(), kBifurcatedDrivers.end(), driver) !=
             kBifurcatedDrivers.end();
}

Status check_device_driver(const DeviceSpec& device, const fs::path& sysfs_root) {
  if (!device.pci) return {};
  const fs::path dev = sysfs_root / "bus/pci/devices" / device.name;
  std::error_code ec;
  if (!fs::exists(dev, ec)) {
    return not_found(fmt::format(
        "PCI device {} does not exist ({} is missing); `dpdk-devbind.py --status` lists the "
        "network devices",
        device.name, dev.string()));
  }
  const std::string driver = link_target_name(dev / "driver");
  const std::string bind_hint = fmt::format(
      "bind it to vfio-pci (modprobe vfio-pci; dpdk-devbind.py --bind=vfio-pci {})", device.name);
  if (driver.empty()) {
    return failed_precondition(
        fmt::format("PCI device {} is bound to no driver: {}", device.name, bind_hint));
  }
  if (std::find(kBifurcatedDrivers.begin(), kBifurcatedDrivers.end(), driver) !=
      kBifurcatedDrivers.end()) {
    // DPDK's mlx4/mlx5 drivers open the device through ibverbs; its RDMA side must be there.
    if (!fs::exists(dev / "infiniband", ec)) {
      return failed_precondition(fmt::format(
          "PCI device {} uses {}, which DPDK reaches through ibverbs, but it has no RDMA device "
          "({} is missing): load {} and install rdma-core (libibverbs); no vfio binding is needed",
          device.name, driver, (dev / "infiniband").string(),
          driver == "mlx4_core" ? "mlx4_ib" : "mlx5_ib"));
    }
    return {};
  }
  if (is_dpdk_usable_driver(driver)) return {};
  const std::string interfaces = interfaces_of(dev);
  return failed_precondition(fmt::format(
      "PCI device {}{} is bound to the kernel driver '{}', which DPDK cannot share: {} (only "
      "mlx5/mlx4 NICs stay on their kernel driver)",
      device.name, interfaces.empty() ? "" : " (interface " + interfaces + ")", driver,
      interfaces.empty() ? bind_hint : "take the interface down and " + bind_hint));
}

}  // namespace collide::replayer::dpdk
