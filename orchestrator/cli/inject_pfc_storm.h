#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

// `collide inject --pfc-storm`: PFC pause frames from one device at a fixed rate for a window,
// against the switch port it is cabled to (a real switch's PFC watchdog), with counters. The
// device is a kernel interface (--dev, a packet socket) or a port DPDK drives (--port, e.g. a PCI
// NIC bound to vfio-pci, which has no kernel interface left to send from).
namespace collide::cli {

struct PfcStormFlags {
  std::string priorities;      // "3" or "3,4": the priorities paused; empty: no storm
  uint32_t quanta = 0xffff;    // each frame's pause time in 512 bit times
  double frames_per_second = 1000;
  std::string port;                  // --port: a replay's port spec (dpdk:<device>); empty: --dev
  std::vector<std::string> eal_args; // --eal-arg: more DPDK EAL arguments, after collide's own
  int lcore = 0;                     // --lcore: the CPU of DPDK's main thread
};

void add_pfc_storm_options(CLI::App* cmd, PfcStormFlags& flags);
bool wants_pfc_storm(const PfcStormFlags& flags);

// Runs the storm on `dev`, or on flags.port when given (in `netns` when given), for `duration`
// (required), then prints what was sent (`json`: as JSON). Ends the command with a usage error for
// bad flags, and fails it when the device refused frames.
void run_pfc_storm_command(const PfcStormFlags& flags, const std::string& netns, const std::string& dev,
                           const std::string& duration, bool json);

}  // namespace collide::cli
