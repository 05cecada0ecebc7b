#include "replayer/backend/port_factory.h"

#include <algorithm>
#include <chrono>
#include <string_view>

#include <fmt/format.h>

#include "replayer/backend/af_packet_port.h"

#ifdef COLLIDE_HAVE_DPDK
#include <rte_mbuf.h>

#include "common/logging.h"
#include "injectors/guardian.h"
#include "injectors/xdp_record.h"
#include "replayer/backend/dpdk_backend.h"
#include "replayer/dpdk/eal.h"
#include "replayer/dpdk/eal_args.h"
#include "replayer/dpdk/port_defaults.h"
#endif

namespace collide::replayer::backend {
namespace {

enum class Kind { kDpdk, kAfPacket };

struct ParsedSpec {
  Kind kind;
  std::string target;  // the device or interface
};

Result<ParsedSpec> parse_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string target = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if ((kind == "afpacket" || kind == "af_packet") && !target.empty()) {
    return ParsedSpec{Kind::kAfPacket, target};
  }
  if (kind == "dpdk" && !target.empty()) {
    if (!dpdk_available()) {
      return failed_precondition(fmt::format(
          "port '{}': this build is without DPDK (-DCOLLIDE_WITH_DPDK=OFF); use "
          "afpacket:<interface>", spec));
    }
    return ParsedSpec{Kind::kDpdk, target};
  }
  return invalid_argument(fmt::format(
      "port '{}': want dpdk:<device> (e.g. dpdk:0000:3b:00.0 or dpdk:net_af_xdp0,iface=eth0) or "
      "afpacket:<interface>", spec));
}

Result<std::unique_ptr<PacketPort>> open_af_packet(const std::string& interface,
                                                   const PortOptions& options) {
  AfPacketConfig config;
  config.interface = interface;
  config.max_frame_bytes = std::max<uint32_t>(options.max_frame_bytes, 64);
  auto port = AfPacketPort::open(config);
  if (!port.ok()) return port.status();
  return std::unique_ptr<PacketPort>(std::move(port).value());
}

#ifdef COLLIDE_HAVE_DPDK
// Starts the EAL for all of `devices` at once, after checking each PCI device's driver and, where
// it takes them, that hugepages are reserved.
Status start_eal(const std::vector<dpdk::DeviceSpec>& devices, const PortOptions& options) {
  for (const dpdk::DeviceSpec& d : devices) {
    COLLIDE_RETURN_IF_ERROR(dpdk::check_device_driver(d, options.sysfs_root));
  }
  if (dpdk::uses_hugepages(devices, options.dpdk) && !dpdk::eal_initialized()) {
    COLLIDE_RETURN_IF_ERROR(dpdk::check_hugepages_reserved(options.sysfs_root));
  }
  auto args = dpdk::eal_args_for(devices, options.dpdk, options.lcore);
  if (!args.ok()) return args.status();
  return dpdk::init_eal(*args);
}

// Once every port is open: the two ends of a pair in one process come up together.
Status wait_for_links(const std::vector<std::unique_ptr<PacketPort>>& ports,
                      const std::vector<ParsedSpec>& parsed, const PortOptions& options) {
  const auto deadline =
      std::chrono::steady_clock::now() + dpdk::DpdkPort::link_up_timeout(options.dpdk);
  for (size_t i = 0; i < ports.size(); ++i) {
    if (parsed[i].kind != Kind::kDpdk) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    COLLIDE_RETURN_IF_ERROR(static_cast<const DpdkBackendPort&>(*ports[i])
                                .dpdk_port()
                                .wait_for_link_up(std::max(left, std::chrono::milliseconds(0))));
  }
  return {};
}

// The kernel keeps the XDP program of an AF_XDP port after a SIGKILL: it is recorded for the
// sweep. A port whose program could not be recorded still works; the sweep then cannot help.
void record_xdp_program(const std::string& device, DpdkBackendPort& port) {
  auto spec = dpdk::parse_device(device);
  std::string iface;
  // devargs: "iface=eth0,start_queue=0,...".
  for (std::string_view rest = spec.ok() ? std::string_view(spec->devargs) : ""; !rest.empty();) {
    const size_t comma = rest.find(',');
    const std::string_view arg = rest.substr(0, comma);
    if (arg.starts_with("iface=")) iface = std::string(arg.substr(6));
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
  }
  auto record = injectors::XdpRecord::create(iface, injectors::default_state_dir());
  if (!record.ok()) {
    logging::get("dpdk")->warn("{}: the XDP program on {} is not recorded for a sweep: {}",
                               device, iface, record.status().message());
    return;
  }
  port.keep_until_closed(std::move(record).value());
}

Result<std::unique_ptr<PacketPort>> open_dpdk(const std::string& device,
                                              const PortOptions& options) {
  v1::DpdkPortConfig config = options.dpdk;
  config.set_device(device);
  auto or_replay_default = [](uint32_t value, uint32_t fallback) {
    return value != 0 ? value : fallback;
  };
  config.set_rx_ring_size(or_replay_default(config.rx_ring_size(), dpdk::kReplayRingSize));
  config.set_tx_ring_size(or_replay_default(config.tx_ring_size(), dpdk::kReplayRingSize));
  const uint32_t queues = std::max<uint32_t>(config.queues(), 1);
  config.set_mbuf_count(
      or_replay_default(config.mbuf_count(), dpdk::kReplayMbufCountPerQueue * queues));
  config.set_mbuf_data_room(or_replay_default(
      config.mbuf_data_room(),
      std::max<uint32_t>(options.max_frame_bytes, 2048) + RTE_PKTMBUF_HEADROOM));
  auto port = dpdk::DpdkPort::open(config);
  if (!port.ok()) return port.status();
  auto backend = std::make_unique<DpdkBackendPort>(std::move(port).value());
  if (backend->dpdk_port().driver() == "net_af_xdp") record_xdp_program(device, *backend);
  return std::unique_ptr<PacketPort>(std::move(backend));
}
#else
Result<std::unique_ptr<PacketPort>> open_dpdk(const std::string& device, const PortOptions&) {
  return failed_precondition(fmt::format("DPDK device '{}': this build is without DPDK", device));
}
Status wait_for_links(const std::vector<std::unique_ptr<PacketPort>>&,
                      const std::vector<ParsedSpec>&, const PortOptions&) {
  return {};
}
#endif

}  // namespace

bool dpdk_available() {
#ifdef COLLIDE_HAVE_DPDK
  return true;
#else
  return false;
#endif
}

Result<std::vector<std::unique_ptr<PacketPort>>> open_ports(const std::vector<std::string>& specs,
                                                            const PortOptions& options) {
  std::vector<ParsedSpec> parsed;
  for (const std::string& spec : specs) {
    auto p = parse_spec(spec);
    if (!p.ok()) return p.status();
    parsed.push_back(std::move(p).value());
  }
#ifdef COLLIDE_HAVE_DPDK
  std::vector<dpdk::DeviceSpec> devices;
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (parsed[i].kind != Kind::kDpdk) continue;
    auto d = dpdk::parse_device(parsed[i].target);
    if (!d.ok()) return d.status().with_context(fmt::format("port '{}'", specs[i]));
    devices.push_back(std::move(d).value());
  }
  if (!devices.empty()) COLLIDE_RETURN_IF_ERROR(start_eal(devices, options));
#endif
  std::vector<std::unique_ptr<PacketPort>> ports;
  for (size_t i = 0; i < parsed.size(); ++i) {
    auto port = parsed[i].kind == Kind::kAfPacket ? open_af_packet(parsed[i].target, options)
                                                  : open_dpdk(parsed[i].target, options);
    if (!port.ok()) return port.status().with_context(fmt::format("port '{}'", specs[i]));
    ports.push_back(std::move(port).value());
  }
  COLLIDE_RETURN_IF_ERROR(wait_for_links(ports, parsed, options));
  return ports;
}

Result<std::unique_ptr<PacketPort>> open_port(const std::string& spec, int lcore,
                                              uint32_t max_frame_bytes,
                                              const std::vector<std::string>& eal_args) {
  PortOptions options;
  options.lcore = lcore;
  options.max_frame_bytes = max_frame_bytes;
  for (const std::string& a : eal_args) options.dpdk.add_eal_args(a);
  auto ports = open_ports({spec}, options);
  if (!ports.ok()) return ports.status();
  return std::move(ports->front());
}

}  // namespace collide::replayer::backend
