#include "orchestrator/control/clock_offset.h"

#include <fmt/format.h>

namespace collide::orchestrator::control {

Result<ClockOffset> estimate_offset(const std::vector<ClockSample>& samples) {
  if (samples.empty()) return invalid_argument("no clock samples");
  ClockOffset best;
  bool have = false;
  for (const ClockSample& s : samples) {
    if (s.t3 < s.t0 || s.t2 < s.t1 || (s.t3 - s.t0) < (s.t2 - s.t1)) {
      return invalid_argument(fmt::format("inconsistent clock sample t0={} t1={} t2={} t3={}", s.t0,
                                          s.t1, s.t2, s.t3));
    }
    const uint64_t rtt = (s.t3 - s.t0) - (s.t2 - s.t1);
    if (have && rtt >= best.round_trip_ns) continue;
    // Differences first, in signed 64 bits: the clocks may be far apart.
    const int64_t forward = static_cast<int64_t>(s.t1 - s.t0);
    const int64_t backward = static_cast<int64_t>(s.t2 - s.t3);
    best.offset_ns = forward / 2 + backward / 2 + (forward % 2 + backward % 2) / 2;
    best.round_trip_ns = rtt;
    best.error_bound_ns = (rtt + 1) / 2;
    have = true;
  }
  best.samples = samples.size();
  return best;
}

Result<ClockOffset> measure_offset(const std::function<uint64_t()>& now,
                                   const std::function<Result<AgentTimes>(uint64_t)>& exchange,
                                   int count) {
  std::vector<ClockSample> samples;
  for (int i = 0; i < count; ++i) {
    ClockSample s;
    s.t0 = now();
    auto agent = exchange(s.t0);
    if (!agent.ok()) return agent.status().with_context("clock probe");
    s.t3 = now();
    s.t1 = agent->receive_ns;
    s.t2 = agent->send_ns;
    samples.push_back(s);
  }
  return estimate_offset(samples);
}

}  // namespace collide::orchestrator::control
