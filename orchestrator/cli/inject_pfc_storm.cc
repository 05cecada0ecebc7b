#include "orchestrator/cli/inject_pfc_storm.h"

#include <csignal>

#include <atomic>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/netns.h"
#include "common/parse_number.h"
#include "injectors/fault_rules.h"
#include "injectors/pfc_storm.h"
#include "orchestrator/cli/commands.h"

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

}  // namespace

void add_pfc_storm_options(CLI::App* cmd, PfcStormFlags& flags) {
  auto* storm = cmd->add_option_group("PFC storm", "PFC pause frames sent from --dev (needs --duration)");
  storm->add_option("--pfc-storm", flags.priorities,
                    "send PFC pause frames for these priorities (e.g. 3, or 3,4) from --dev, as a NIC "
                    "that keeps pausing does, to test the switch port's PFC watchdog")
      ->type_name("PRIORITIES");
  storm->add_option("--pfc-quanta", flags.quanta, "each frame's pause time in quanta of 512 bit times")
      ->check(CLI::Range(0u, 65535u))
      ->capture_default_str();
  storm->add_option("--pfc-rate", flags.frames_per_second, "PFC frames per second")->capture_default_str();
}

bool wants_pfc_storm(const PfcStormFlags& flags) { return !flags.priorities.empty(); }

void run_pfc_storm_command(const PfcStormFlags& flags, const std::string& netns, const std::string& dev,
                           const std::string& duration, bool json) {
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
  std::cerr << fmt::format("collide inject: PFC storm on {}{}: priorities {}, {} quanta, {:g} frames/s for {:.3f} s\n",
                           dev, netns.empty() ? "" : " in " + netns, flags.priorities, o.quanta,
                           o.frames_per_second, static_cast<double>(o.duration.count()) / 1e9);
  auto result = injectors::run_pfc_storm(dev, o, &g_stop);
  if (!result.ok()) fail("inject", kExitFailed, result.status().message());
  if (json) {
    std::cout << nlohmann::json{{"dev", dev},
                                {"priorities", flags.priorities},
                                {"quanta", o.quanta},
                                {"frames_per_second", o.frames_per_second},
                                {"frames_sent", result->frames_sent},
                                {"frames_failed", result->frames_failed},
                                {"frames_skipped", result->frames_skipped},
                                {"seconds", result->seconds}}
                     .dump()
              << "\n";
  } else {
    std::cout << fmt::format("{}: {} PFC frames sent, {} refused by the device, {} skipped (due while this "
                             "machine was too busy to send them), in {:.3f} s ({:.1f} per second)\n",
                             dev, result->frames_sent, result->frames_failed, result->frames_skipped, result->seconds,
                             result->seconds > 0 ? static_cast<double>(result->frames_sent) / result->seconds : 0.0);
  }
  if (result->frames_failed > 0) fail("inject", kExitFailed, "the device refused some PFC frames");
}

}  // namespace collide::cli
