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

// "flap#2" -> "flap"; a name that is no occurrence's stays as it is.
inline std::string_view fault_of_occurrence(std::string_view name) {
  return name.substr(0, name.find(kOccurrenceMark));
}

}  // namespace collide::orchestrator::faults
