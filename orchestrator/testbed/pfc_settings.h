#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "collide/testbed.pb.h"
#include "orchestrator/testbed/port_queue.h"

// Lossless mode's settings with their defaults, decided here and nowhere else: the scenario's
// `testbed.virtual.pfc` (v1::PfcSettings, where 0 or unset means "the default") resolved into the
// numbers the switches and hosts use, and the checks that make a lossless fabric possible.
namespace collide::orchestrator::testbed {

// RoCE's lossless class on most fabrics.
inline constexpr uint32_t kDefaultPfcPriority = 3;
// The longest pause a frame can ask for; switches refresh it long before it ends.
inline constexpr uint32_t kDefaultPauseQuanta = 0xffff;
// Per ingress port: a switch holding this much from one port pauses it. Small against the
// default buffer (20 ms at the rate) so that what is in flight while the pause takes effect
// (a poll period and the pause frame's way) still fits.
inline constexpr uint64_t kDefaultXoffBytes = 128 * 1024;
// How often a switch looks at its queues: the latency of its pauses. Each look costs one netlink
// dump per switch, so shorter periods take CPU the replays need.
inline constexpr std::chrono::microseconds kDefaultPfcPoll{500};
// The shortest poll period: a poll costs 20-30 us of netlink per switch, and the switches' thread
// runs at real-time priority, so much shorter periods would take a core from the replays.
inline constexpr std::chrono::microseconds kMinPfcPoll{100};
// A host pauses its leaf port when this many frames wait to be taken from its receive buffer.
inline constexpr uint32_t kDefaultHostXoffFrames = 128;
// As switches' PFC watchdogs do by default: give a port its pauses back after this long.
inline constexpr std::chrono::milliseconds kDefaultWatchdogRestore{200};

struct ResolvedPfc {
  bool lossless = false;
  uint32_t priority = kDefaultPfcPriority;
  uint32_t quanta = kDefaultPauseQuanta;
  uint64_t xoff_bytes = kDefaultXoffBytes;
  uint64_t xon_bytes = kDefaultXoffBytes / 2;
  std::chrono::microseconds poll = kDefaultPfcPoll;
  uint32_t host_xoff_frames = kDefaultHostXoffFrames;
  uint32_t host_xon_frames = kDefaultHostXoffFrames / 4;
  // The watchdog; zero detect: none.
  std::chrono::nanoseconds watchdog_detect{0};
  std::chrono::nanoseconds watchdog_restore{kDefaultWatchdogRestore};
};

// Defaults filled in; `lossless` false when the spec has no `pfc` or it is off (the settings are
// resolved all the same, for the variants that turn it on).
ResolvedPfc resolve_pfc(const v1::VirtualTestbedSpec& spec);

// What makes lossless mode impossible, the field relative to VirtualTestbedSpec ("pfc.xon_bytes"):
// a priority above 7, xon not below xoff, an unshaped link (a port with no shaper has no queue to
// hold), or an xoff that leaves a port's buffer no room for what is in flight.
std::optional<ProfileError> check_pfc(const v1::VirtualTestbedSpec& spec);

}  // namespace collide::orchestrator::testbed
