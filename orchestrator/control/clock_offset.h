#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/result.h"

// How far an agent's clock is from the orchestrator's, NTP-style: the orchestrator notes when it
// sends a probe (t0), the agent when it receives it (t1) and answers (t2), the orchestrator when
// the answer arrives (t3). Then offset = ((t1 - t0) + (t2 - t3)) / 2 and the round trip is
// (t3 - t0) - (t2 - t1). Whatever the split of the round trip between the two directions, the
// true offset lies within round trip / 2 of the estimate; the sample with the shortest round trip
// has the tightest bound, so of several samples that one is taken.
namespace collide::orchestrator::control {

struct ClockSample {
  uint64_t t0 = 0;  // orchestrator sends (orchestrator's clock)
  uint64_t t1 = 0;  // agent receives (agent's clock)
  uint64_t t2 = 0;  // agent answers (agent's clock)
  uint64_t t3 = 0;  // orchestrator receives (orchestrator's clock)
};

struct ClockOffset {
  int64_t offset_ns = 0;        // agent's clock minus the orchestrator's
  uint64_t error_bound_ns = 0;  // the true offset is within offset_ns +- this
  uint64_t round_trip_ns = 0;   // of the sample used
  size_t samples = 0;

  // A time on the agent's clock, on the orchestrator's.
  int64_t to_orchestrator(uint64_t agent_ns) const { return static_cast<int64_t>(agent_ns) - offset_ns; }
  // A time on the orchestrator's clock, on the agent's.
  int64_t to_agent(uint64_t orchestrator_ns) const {
    return static_cast<int64_t>(orchestrator_ns) + offset_ns;
  }
};

// The estimate from samples; an error when there are none or a sample is inconsistent (an answer
// before its probe, or an agent that answered before it received).
Result<ClockOffset> estimate_offset(const std::vector<ClockSample>& samples);

// Takes `count` samples: `now` reads the orchestrator's clock, `exchange(t0)` sends a probe and
// returns the agent's (t1, t2).
struct AgentTimes {
  uint64_t receive_ns = 0;
  uint64_t send_ns = 0;
};
Result<ClockOffset> measure_offset(const std::function<uint64_t()>& now,
                                   const std::function<Result<AgentTimes>(uint64_t t0)>& exchange,
                                   int count);

}  // namespace collide::orchestrator::control
