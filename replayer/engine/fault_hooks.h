#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "replayer/transport/packet.h"

// Faults that live in the replayer rather than on the wire. This kernel has no netem, so a slow
// receiver and a slow sender are played by the engine itself:
// - a drain pause: the engine stops taking frames from its port for the window, so the port's
//   receive ring fills and drops what arrives, as a host too busy to drain its NIC would;
// - a send delay: every frame the engine builds in the window reaches the port `delay` later
//   (a delay line; order is kept), as a sender stalled on its host (PCIe, CPU) would.
// Windows count from the engine's start (its first poll); a zero duration lasts to the end. A
// window aimed at one NIC of the host acts only on that NIC's engines.
namespace collide::replayer::engine {

struct DrainPause {
  std::chrono::nanoseconds start{0};
  std::chrono::nanoseconds duration{0};
  std::optional<uint32_t> nic;  // unset: every NIC of the host
};

struct SendDelay {
  std::chrono::nanoseconds start{0};
  std::chrono::nanoseconds duration{0};
  std::chrono::nanoseconds delay{0};
  std::optional<uint32_t> nic;  // unset: every NIC of the host
};

// When a hook really was in force, on the engine's clock: ground truth for reports.
struct HookWindow {
  enum class Kind { kDrainPause, kSendDelay };
  Kind kind = Kind::kDrainPause;
  transport::Nanos start_ns = 0;
  transport::Nanos end_ns = 0;  // 0: still in force when the run ended
  uint32_t index = 0;           // which window of its kind, in the order they were configured
};

// The hooks' windows on the engine's clock. Pure: the caller passes the time.
class FaultHooks {
 public:
  FaultHooks() = default;
  // `nic`: the NIC of the engine these hooks act on (windows aimed at another NIC pass it by, and
  // keep their index among those configured).
  FaultHooks(std::vector<DrainPause> pauses, std::vector<SendDelay> delays, uint32_t nic = 0)
      : pauses_(std::move(pauses)), delays_(std::move(delays)), nic_(nic) {}

  bool empty() const { return pauses_.empty() && delays_.empty(); }
  // Windows count from the first call; later calls do nothing.
  void start(transport::Nanos now);
  bool started() const { return started_.has_value(); }
  // Notes which windows are in force at `now` (for windows()); call once per poll.
  void observe(transport::Nanos now);

  // Whether the engine must leave its receive ring alone now.
  bool draining_paused(transport::Nanos now) const;
  // How long a frame built now is held (the longest of the windows in force; 0 outside them).
  transport::Nanos send_delay(transport::Nanos now) const;
  // The next moment a hook starts or ends after `now`, so an idle engine wakes for it.
  std::optional<transport::Nanos> next_change(transport::Nanos now) const;

  // The windows that began so far, with their real start and end as the engine saw them.
  std::vector<HookWindow> windows() const;

 private:
  transport::Nanos begin_of(std::chrono::nanoseconds offset) const;
  // 0: open to the end of the run.
  transport::Nanos end_of(std::chrono::nanoseconds offset, std::chrono::nanoseconds length) const;
  bool inside(transport::Nanos now, std::chrono::nanoseconds offset,
              std::chrono::nanoseconds length) const;
  bool mine(const std::optional<uint32_t>& nic) const { return !nic || *nic == nic_; }

  std::vector<DrainPause> pauses_;
  std::vector<SendDelay> delays_;
  uint32_t nic_ = 0;
  std::optional<transport::Nanos> started_;
  // One slot per configured window (pauses first, then delays): when it was first and last seen
  // in force.
  std::vector<std::optional<HookWindow>> seen_;
};

}  // namespace collide::replayer::engine
