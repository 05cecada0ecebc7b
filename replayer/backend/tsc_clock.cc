#include "replayer/backend/tsc_clock.h"

#include <thread>

#ifdef COLLIDE_HAVE_DPDK
#include <rte_cycles.h>

#include "replayer/dpdk/eal.h"
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define COLLIDE_X86_TSC 1
#endif

namespace collide::replayer::backend {
namespace {

transport::Nanos steady_ns() {
  return static_cast<transport::Nanos>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now().time_since_epoch())
                                           .count());
}

#if defined(COLLIDE_HAVE_DPDK) || defined(COLLIDE_X86_TSC)
uint64_t read_tsc() {
#ifdef COLLIDE_HAVE_DPDK
  return rte_rdtsc();
#else
  return __rdtsc();
#endif
}
#endif

// An invariant TSC ticks at one rate in every power state and on every core (CPUID 80000007H,
// EDX bit 8); without it the counter is no clock.
bool invariant_tsc() {
#ifdef COLLIDE_X86_TSC
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &a, &b, &c, &d) == 0) return false;
  return (d & (1u << 8)) != 0;
#elif defined(COLLIDE_HAVE_DPDK)
  return true;  // DPDK's counter on other architectures is a constant-rate timer
#else
  return false;
#endif
}

}  // namespace

TscClock TscClock::calibrate(std::chrono::milliseconds over) {
  TscClock clock;
  clock.base_ns_ = steady_ns();
#if defined(COLLIDE_HAVE_DPDK) || defined(COLLIDE_X86_TSC)
  if (!invariant_tsc()) return clock;
#ifdef COLLIDE_HAVE_DPDK
  if (dpdk::eal_initialized() && rte_get_tsc_hz() > 0) {
    clock.base_ticks_ = read_tsc();
    clock.base_ns_ = steady_ns();
    clock.ns_per_tick_ = 1e9 / static_cast<double>(rte_get_tsc_hz());
    clock.uses_tsc_ = true;
    return clock;
  }
#endif
  const uint64_t t0 = read_tsc();
  const transport::Nanos n0 = steady_ns();
  std::this_thread::sleep_for(over);
  const uint64_t t1 = read_tsc();
  const transport::Nanos n1 = steady_ns();
  if (t1 <= t0 || n1 <= n0) return clock;
  clock.ns_per_tick_ = static_cast<double>(n1 - n0) / static_cast<double>(t1 - t0);
  clock.base_ticks_ = t1;
  clock.base_ns_ = n1;
  clock.uses_tsc_ = true;
#else
  (void)over;
#endif
  return clock;
}

transport::Nanos TscClock::now() const {
#if defined(COLLIDE_HAVE_DPDK) || defined(COLLIDE_X86_TSC)
  if (uses_tsc_) {
    const uint64_t ticks = read_tsc();
    // Counters of different cores may differ by a few ticks: never step back before the base.
    if (ticks <= base_ticks_) return base_ns_;
    return base_ns_ + static_cast<transport::Nanos>(static_cast<double>(ticks - base_ticks_) * ns_per_tick_);
  }
#endif
  return steady_ns();
}

}  // namespace collide::replayer::backend
