#include "orchestrator/cli/inject_pfc_storm.h"

#include <csignal>

#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/netns.h"
#include "common/parse_number.h"
#include "injectors/fault_rules.h"
#include "injectors/pfc_storm.h"
#include "orchestrator/cli/commands.h"
#include "replayer/backend/port_factory.h"

namespace collide::cli {
namespace {

[[noreturn]] void usage(const std::string& message) { fail("inject", kExitUsage, message); }

std::atomic<bool> g_stop{false};
void on_stop(int) { g_stop.store(true); }

// "3" or "3,4" -> the class-enable bits.
Result<uint8_t> parse_priorities(const std::string& text) {
  uint8_t bits = 0;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    auto p = parse_number<uint32_t>(item, "--pfc-storm priority");
    if (!p.ok()) return p.status();
    if (*p > 7) return invalid_argument(fmt::format("--pfc-storm: priority {} is not 0-7", *p));
    bits = static_cast<uint8_t>(bits | 1u << *p);
  }
  if (bits == 0) return invalid_argument("--pfc-storm needs priorities, e.g. 3 or 3,4");
  return bits;
}

// What a storm sent, and on a port DPDK drives, what its driver counted.
struct StormOutcome {
  injectors::PfcStormResult sent;
  std::optional<replayer::backend::PortCounters> port;  // the driver's counters after the storm
  std::string device;                                   // the port as its driver describes it
};

// How long the driver may take to count the last frames it took (a NIC sends its transmit ring
// after tx_burst returns).
constexpr auto kTxSettle = std::chrono::milliseconds(200);

StormOutcome storm_from_port(const PfcStormFlags& flags, const injectors::PfcStormOptions& o) {
  namespace backend = replayer::backend;
  auto opened = backend::open_port(flags.port, flags.lcore, 2048, flags.eal_args);
  if (!opened.ok()) fail("inject", kExitFailed, fmt::format("--port {}: {}", flags.port, opened.status().message()));
  backend::PacketPort& port = **opened;
  auto frame = injectors::pfc_storm_frame(o, port.mac());
  if (!frame.ok()) usage(frame.status().message());
  const uint64_t tx_before = port.counters().tx_frames;
  StormOutcome out;
  out.device = port.describe();
  std::cerr << fmt::format("collide inject: PFC storm from {}: priorities {}, {} quanta, {:g} frames/s for {:.3f} s\n",
                           out.device, flags.priorities, o.quanta, o.frames_per_second,
                           static_cast<double>(o.duration.count()) / 1e9);
  auto sent = injectors::run_storm_schedule(
      o, *frame,
      [&port](std::span<const uint8_t> bytes) {
        backend::Frame f{};
        if (!port.acquire({&f, 1}).ok()) return false;  // no buffer: the pool is spent
        std::memcpy(f.data, bytes.data(), bytes.size());
        f.len = static_cast<uint32_t>(bytes.size());
        if (port.submit({&f, 1}) == 1) return true;
        port.release({&f, 1});  // the transmit ring is full
        return false;
      },
      &g_stop);
  if (!sent.ok()) fail("inject", kExitFailed, sent.status().message());
  out.sent = *sent;
  const auto settle_until = std::chrono::steady_clock::now() + kTxSettle;
  while (port.counters().tx_frames - tx_before < out.sent.frames_sent &&
         std::chrono::steady_clock::now() < settle_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  backend::PortCounters counted = port.counters();
  counted.tx_frames -= tx_before;
  out.port = counted;
  return out;
}

StormOutcome storm_from_interface(const PfcStormFlags& flags, const injectors::PfcStormOptions& o,
                                  const std::string& dev, const std::string& netns) {
  std::cerr << fmt::format("collide inject: PFC storm on {}{}: priorities {}, {} quanta, {:g} frames/s for {:.3f} s\n",
                           dev, netns.empty() ? "" : " in " + netns, flags.priorities, o.quanta,
                           o.frames_per_second, static_cast<double>(o.duration.count()) / 1e9);
  auto sent = injectors::run_pfc_storm(dev, o, &g_stop);
  if (!sent.ok()) fail("inject", kExitFailed, sent.status().message());
  return StormOutcome{*sent, std::nullopt, dev};
}

}  // namespace

void add_pfc_storm_options(CLI::App* cmd, PfcStormFlags& flags) {
  auto* storm = cmd->add_option_group("PFC storm", "PFC pause frames sent from --dev or --port (needs --duration)");
  storm->add_option("--pfc-storm", flags.priorities,
                    "send PFC pause frames for these priorities (e.g. 3, or 3,4) from --dev or --port, as a "
                    "NIC that keeps pausing does, to test the switch port's PFC watchdog")
      ->type_name("PRIORITIES");
  storm->add_option("--pfc-quanta", flags.quanta, "each frame's pause time in quanta of 512 bit times")
      ->check(CLI::Range(0u, 65535u))
      ->capture_default_str();
  storm->add_option("--pfc-rate", flags.frames_per_second, "PFC frames per second")->capture_default_str();
  storm->add_option("--port", flags.port,
                    "send the storm from a port DPDK drives instead of --dev: dpdk:<device>, e.g. a PCI NIC "
                    "bound to vfio-pci (dpdk:0000:3b:00.0) or a virtual device (dpdk:net_af_packet0,iface=veth0)");
  storm->add_option("--eal-arg", flags.eal_args,
                    "with --port: one more DPDK EAL argument, after collide's own (repeatable)");
  storm->add_option("--lcore", flags.lcore, "with --port: the CPU for DPDK's main thread")->capture_default_str();
}

bool wants_pfc_storm(const PfcStormFlags& flags) { return !flags.priorities.empty(); }

void check_pfc_storm_device(const PfcStormFlags& flags, const std::string& dev) {
  if (flags.port.empty()) {
    if (!flags.eal_args.empty()) usage("--eal-arg is for a storm from --port");
    return;
  }
  if (!dev.empty()) usage("--pfc-storm: give --dev (a kernel interface) or --port (a DPDK port), not both");
  if (flags.port.rfind("dpdk:", 0) != 0) {
    usage(fmt::format("--port {}: a storm's port is dpdk:<device>; for a kernel interface use --dev", flags.port));
  }
}

void run_pfc_storm_command(const PfcStormFlags& flags, const std::string& netns, const std::string& dev,
                           const std::string& duration, bool json) {
  check_pfc_storm_device(flags, dev);
  injectors::PfcStormOptions o;
  auto priorities = parse_priorities(flags.priorities);
  if (!priorities.ok()) usage(priorities.status().message());
  o.priorities = *priorities;
  o.quanta = static_cast<uint16_t>(flags.quanta);
  o.frames_per_second = flags.frames_per_second;
  if (duration.empty()) usage("--pfc-storm needs --duration: a storm always ends");
  auto d = injectors::parse_duration(duration);
  if (!d.ok()) usage("--duration: " + d.status().message());
  o.duration = *d;
  if (Status s = injectors::validate(o); !s.ok()) usage(s.message());

  std::unique_ptr<netns::Scope> scope;
  if (!netns.empty()) {
    auto s = netns::Scope::enter(netns);
    if (!s.ok()) usage(fmt::format("--netns {}: {}", netns, s.status().message()));
    scope = std::move(s).value();
  }
  std::signal(SIGINT, on_stop);
  std::signal(SIGTERM, on_stop);
  const StormOutcome out = flags.port.empty() ? storm_from_interface(flags, o, dev, netns) : storm_from_port(flags, o);
  const injectors::PfcStormResult& r = out.sent;
  if (json) {
    nlohmann::json j{{"dev", out.device},
                     {"priorities", flags.priorities},
                     {"quanta", o.quanta},
                     {"frames_per_second", o.frames_per_second},
                     {"frames_sent", r.frames_sent},
                     {"frames_failed", r.frames_failed},
                     {"frames_skipped", r.frames_skipped},
                     {"seconds", r.seconds}};
    if (out.port) {
      j["port_tx_frames"] = out.port->tx_frames;
      j["port_tx_errors"] = out.port->tx_errors;
    }
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format("{}: {} PFC frames sent, {} refused by the device, {} skipped (due while this "
                             "machine was too busy to send them), in {:.3f} s ({:.1f} per second)\n",
                             out.device, r.frames_sent, r.frames_failed, r.frames_skipped, r.seconds,
                             r.seconds > 0 ? static_cast<double>(r.frames_sent) / r.seconds : 0.0);
    if (out.port) {
      std::cout << fmt::format("the driver counted {} frames sent and {} transmit errors\n", out.port->tx_frames,
                               out.port->tx_errors);
    }
  }
  if (r.frames_failed > 0) fail("inject", kExitFailed, "the device refused some PFC frames");
  if (out.port && out.port->tx_frames < r.frames_sent) {
    fail("inject", kExitFailed,
         fmt::format("the driver counted {} of the {} PFC frames it took as sent", out.port->tx_frames, r.frames_sent));
  }
}

}  // namespace collide::cli
