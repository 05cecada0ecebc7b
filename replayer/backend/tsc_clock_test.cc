#include "replayer/backend/tsc_clock.h"

#include <thread>

#include <gtest/gtest.h>

namespace collide::replayer::backend {
namespace {

transport::Nanos steady_ns() {
  return static_cast<transport::Nanos>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now().time_since_epoch())
                                           .count());
}

TEST(TscClockTest, NeverGoesBackAndKeepsStepWithTheSteadyClock) {
  const TscClock clock = TscClock::calibrate();
  transport::Nanos last = clock.now();
  for (int i = 0; i < 100000; ++i) {
    const transport::Nanos t = clock.now();
    ASSERT_GE(t, last);
    last = t;
  }
  const transport::Nanos tsc0 = clock.now(), steady0 = steady_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const transport::Nanos tsc1 = clock.now(), steady1 = steady_ns();
  const double elapsed_tsc = static_cast<double>(tsc1 - tsc0);
  const double elapsed_steady = static_cast<double>(steady1 - steady0);
  EXPECT_NEAR(elapsed_tsc / elapsed_steady, 1.0, 0.01) << (clock.uses_tsc() ? "TSC" : "steady");
  // Readings start near the steady clock's, so both can be compared.
  EXPECT_LT(std::abs(static_cast<double>(tsc1) - static_cast<double>(steady1)), 5e6);
#if defined(__x86_64__)
  RecordProperty("uses_tsc", clock.uses_tsc() ? "yes" : "no");
#endif
}

}  // namespace
}  // namespace collide::replayer::backend
