#pragma once

#include <string>

#include <CLI/CLI.hpp>

// `collide inject --pfc-storm`: PFC pause frames from one device at a fixed rate for a window,
// against the switch port it is cabled to (a real switch's PFC watchdog), with counters.
namespace collide::cli {

struct PfcStormFlags {
  std::string priorities;      // "3" or "3,4": the priorities paused; empty: no storm
  uint32_t quanta = 0xffff;    // each frame's pause time in 512 bit times
  double frames_per_second = 1000;
};

void add_pfc_storm_options(CLI::App* cmd, PfcStormFlags& flags);
bool wants_pfc_storm(const PfcStormFlags& flags);

// Runs the storm on `dev` (in `netns` when given) for `duration` (required), then prints what was
// sent (`json`: as JSON). Ends the command with a usage error for bad flags.
void run_pfc_storm_command(const PfcStormFlags& flags, const std::string& netns, const std::string& dev,
                           const std::string& duration, bool json);

}  // namespace collide::cli
