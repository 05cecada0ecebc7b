#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

// The `collide inject` flags for faults that are not per-packet decisions: link flaps, rate
// limits (slow receivers) and the sweep of leftovers. Everything they change is registered with a
// guardian process first, so it is undone even if collide is killed.
namespace collide::cli {

struct LinkFaultOptions {
  std::string flap;        // DOWN_FOR[,EVERY]
  std::string rate;        // e.g. 100mbit
  std::string rate_burst;  // e.g. 64k (default: 10 ms at the rate, at least 32 KiB)
  bool sweep = false;
  std::string state_dir;   // default: $COLLIDE_STATE_DIR or /run/collide
};

void add_link_fault_options(CLI::App* cmd, LinkFaultOptions& options);
bool wants_link_faults(const LinkFaultOptions& options);
// Checks the flags' text; a bad one ends the command with a usage error before anything starts.
void check_link_fault_options(const LinkFaultOptions& options);

// The link faults of one run, undone (link up with its routes, qdiscs and ifb gone) when this
// object goes.
class ActiveLinkFaults;
struct ActiveLinkFaultsDeleter {
  void operator()(ActiveLinkFaults* faults) const;
};
using ActiveLinkFaultsPtr = std::unique_ptr<ActiveLinkFaults, ActiveLinkFaultsDeleter>;

// Starts the link faults on `dev` (direction: ingress, egress or both; a flap ignores it).
// Returns null when none were asked for; ends the command on failure.
ActiveLinkFaultsPtr start_link_faults(const LinkFaultOptions& options, const std::string& netns,
                                      const std::string& dev, const std::string& direction);

// `collide inject --sweep`: removes what earlier runs left behind and prints what it removed.
void run_link_fault_sweep(const LinkFaultOptions& options, const std::string& netns);

// `collide inject` with only link faults: holds them for `duration` (0: until SIGINT/SIGTERM).
void run_link_faults_only(const LinkFaultOptions& options, const std::string& netns,
                          const std::string& dev, const std::string& direction,
                          std::chrono::nanoseconds duration);

}  // namespace collide::cli
