#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collide/scenario.pb.h"

// A recurring fault (Fault.mtbf_ns) as the faults one run arms: each occurrence a copy of the
// fault with a window of its own (start_ns, duration_ns), a seed of its own and its own name
// ("flap#1", occurrence_name.h). Pure and deterministic: the same scenario seed, fault and
// repetition draw the same occurrences on every machine, because the gaps come from a fixed
// generator (mt19937_64) through the exponential's inverse distribution function rather than
// from <random>'s distributions, whose algorithms each standard library picks for itself.
namespace collide::orchestrator::faults {

// At most this many occurrences of one fault in one run. Each per-packet occurrence is a program
// of its own in the kernel, loaded when the run is armed; a fault whose mean time between
// failures is short against its run should be a fault with a probability instead.
inline constexpr size_t kMaxOccurrencesPerRun = 8;

struct Occurrences {
  std::vector<v1::Fault> faults;  // in time order
  // The draws reached kMaxOccurrencesPerRun before the horizon: a run lasting past
  // `drawn_until` sees no further occurrence.
  bool capped = false;
  std::chrono::nanoseconds drawn_until{0};
};

// The occurrences of `fault` that begin before `horizon` (counted from the run's start, e.g. its
// timeout) in repetition `repetition` of a scenario with Runs.seed `runs_seed`. A fault without
// mtbf_ns is its one occurrence, unchanged.
Occurrences draw_occurrences(const v1::Fault& fault, uint64_t runs_seed, uint32_t repetition,
                             std::chrono::nanoseconds horizon);

}  // namespace collide::orchestrator::faults
