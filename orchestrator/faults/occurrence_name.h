#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

// The names of a recurring fault's occurrences (Fault.mtbf_ns): "flap#2" is the second time fault
// "flap" acted in its run. Each occurrence has a window of its own in a run's results; what a
// variant sums over its runs, and what the metrics label, is the fault's own name. A scenario's
// fault names cannot hold the mark, so the split is unambiguous.
namespace collide::orchestrator::faults {

inline constexpr char kOccurrenceMark = '#';

// "flap", 2 -> "flap#2"; occurrences count from 1.
inline std::string occurrence_name(std::string_view fault, size_t occurrence) {
  return fmt::format("{}{}{}", fault, kOccurrenceMark, occurrence);
}

// "flap#2" -> "flap"; a phase of an occurrence keeps its phase ("flap#2/detection" ->
// "flap/detection", phase_name.h); a name that is no occurrence's stays as it is.
inline std::string fault_of_occurrence(std::string_view name) {
  const size_t mark = name.find(kOccurrenceMark);
  if (mark == std::string_view::npos) return std::string(name);
  size_t rest = mark + 1;
  while (rest < name.size() && name[rest] >= '0' && name[rest] <= '9') ++rest;
  return std::string(name.substr(0, mark)) + std::string(name.substr(rest));
}

}  // namespace collide::orchestrator::faults
