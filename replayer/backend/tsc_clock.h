#pragma once

#include <chrono>
#include <cstdint>

#include "replayer/transport/packet.h"

namespace collide::replayer::backend {

// A monotonic nanosecond clock read from the CPU's time-stamp counter, for the engine's pacer,
// which decides for every frame whether it may leave. The counter's rate comes from DPDK
// (rte_get_tsc_hz) once its EAL is up, else from a short calibration against CLOCK_MONOTONIC.
// Where the counter is not invariant (or not x86 without DPDK) it falls back to steady_clock.
// Readings start near steady_clock's, so the two can be compared.
class TscClock {
 public:
  static TscClock calibrate(std::chrono::milliseconds over = std::chrono::milliseconds(20));

  transport::Nanos now() const;
  bool uses_tsc() const { return uses_tsc_; }
  double ticks_per_second() const { return uses_tsc_ ? 1e9 / ns_per_tick_ : 1e9; }

 private:
  bool uses_tsc_ = false;
  uint64_t base_ticks_ = 0;
  transport::Nanos base_ns_ = 0;
  double ns_per_tick_ = 1;
};

}  // namespace collide::replayer::backend
