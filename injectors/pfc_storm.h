#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "replayer/wire/addresses.h"

// A PFC storm from a host's NIC: PFC pause frames for the chosen priorities, sent at a fixed rate
// for a window, as a NIC or switch chip that keeps pausing does. Aimed at the switch port the NIC
// is cabled to, it shows whether that switch's PFC watchdog detects the storm and how fast it
// restores the queue. On a kernel interface frames go out through a packet socket (the kernel's
// own stack neither sends nor forwards MAC control frames), from the interface's own MAC; from a
// NIC bound to DPDK the caller opens the port and hands run_storm_schedule its own sender.
namespace collide::injectors {

struct PfcStormOptions {
  uint8_t priorities = 1 << 3;  // bit i: pause priority i (RoCE's lossless class is often 3)
  uint16_t quanta = 0xffff;     // each frame's pause time, in 512 bit times
  double frames_per_second = 1000;
  std::chrono::nanoseconds duration{0};  // must be positive: a storm always ends
};

struct PfcStormResult {
  uint64_t frames_sent = 0;
  uint64_t frames_failed = 0;  // refused by the socket (e.g. the device queue full or down)
  uint64_t frames_skipped = 0; // due while the thread could not run (a busy machine), not sent late
  double seconds = 0;          // from the first frame to the end
};

Status validate(const PfcStormOptions& options);

// The frame a storm repeats: a PFC pause of `quanta` for each of the priorities, from `source`.
Result<std::vector<uint8_t>> pfc_storm_frame(const PfcStormOptions& options, const replayer::wire::MacAddress& source);

// Sends one frame; false when the device refused it.
using StormSend = std::function<bool(std::span<const uint8_t> frame)>;

// Sends `frame` through `send` on the storm's schedule until the duration ends or `stop` is set.
// Frames keep to their schedule (absolute send times, no drift); one that would be later than a
// whole period is skipped, not sent in a burst.
Result<PfcStormResult> run_storm_schedule(const PfcStormOptions& options, std::span<const uint8_t> frame,
                                          const StormSend& send, const std::atomic<bool>* stop = nullptr);

// The storm on kernel interface `dev` (in the calling thread's namespace), through a packet
// socket: run_storm_schedule of pfc_storm_frame from the interface's MAC.
Result<PfcStormResult> run_pfc_storm(const std::string& dev, const PfcStormOptions& options,
                                     const std::atomic<bool>* stop = nullptr);

}  // namespace collide::injectors
