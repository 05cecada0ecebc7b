#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collide/port.pb.h"
#include "common/result.h"

// The EAL's arguments, built from the devices of every port a process opens (the EAL starts once
// per process, so its device allowlist must name them all at once), and the check that a PCI
// device is bound to a driver DPDK can use. Pure: no DPDK call, no root; sysfs is a parameter.
namespace collide::replayer::dpdk {

// A device a DPDK port names: a PCI NIC or a virtual device, with the driver's arguments.
struct DeviceSpec {
  bool pci = false;
  // The name DPDK gives the device's port: a PCI address in full form ("0000:3b:00.0"), or a
  // virtual device ("net_af_xdp0").
  std::string name;
  std::string devargs;  // after the first comma ("rxq_cqe_comp_en=0", "iface=veth0"); may be empty

  // name[,devargs]: what the EAL's -a and rte_dev_probe take.
  std::string probe_string() const;
  bool operator==(const DeviceSpec&) const = default;
};

// Reads a port's device: "0000:3b:00.0" or "3b:00.0" (domain 0), optionally followed by
// ",devargs", is a PCI device; a name without ':' ("net_null0", "net_af_xdp0,iface=veth0") is a
// virtual device. A malformed PCI address is an error that names it and the bad part.
Result<DeviceSpec> parse_device(std::string_view device);

// Whether the EAL of a process whose ports are `devices` takes hugepages (eal_args_for's choice).
bool uses_hugepages(std::span<const DeviceSpec> devices, const v1::DpdkPortConfig& config);

// EAL arguments for a process whose ports are `devices`, with its main thread on `main_lcore`:
// - any PCI device: "-a <address>[,devargs]" for each (nothing else on the PCI bus is touched),
//   and hugepages ("--in-memory") unless `config.eal_memory` asks for the heap;
// - only virtual devices: "--no-pci" and heap memory ("--no-huge -m <eal_heap_mb>"), unless
//   `config.eal_memory` asks for hugepages; virtual devices are probed when their port opens;
// - always "--no-telemetry" and "-l <main_lcore>", then `config.eal_args`.
// A device named twice is an error (two ports cannot share one).
Result<std::vector<std::string>> eal_args_for(std::span<const DeviceSpec> devices,
                                              const v1::DpdkPortConfig& config, int main_lcore);

// Checks that hugepages are reserved (<sysfs_root>/kernel/mm/hugepages/*/nr_hugepages), so an EAL
// that needs them fails here with what to do rather than deep in its start-up.
Status check_hugepages_reserved(const std::filesystem::path& sysfs_root = "/sys");

// Drivers through which DPDK reaches a PCI device: it maps the device itself (vfio-pci,
// uio_pci_generic, igb_uio), or shares it with the kernel driver (mlx5_core, mlx4_core: the
// "bifurcated" drivers, reached through rdma-core's ibverbs).
bool is_dpdk_usable_driver(std::string_view driver);

// Checks, before the EAL probes it, that a PCI device exists and is bound to a driver DPDK can
// use (read from <sysfs_root>/bus/pci/devices/<address>/driver); a bifurcated one must also have
// its RDMA device (<...>/infiniband). The error says what to do: bind to vfio-pci with
// dpdk-devbind.py, or load mlx5_ib and install rdma-core. Virtual devices pass.
Status check_device_driver(const DeviceSpec& device,
                           const std::filesystem::path& sysfs_root = "/sys");

}  // namespace collide::replayer::dpdk
