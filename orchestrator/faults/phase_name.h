#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

// The names of a link failure's phase windows (link_failure.h), beside the fault's own window:
// "spine-fail/detection", "spine-fail/convergence", "spine-fail/converged" (measured under BGP:
// "spine-fail/detection", "spine-fail/convergence", "spine-fail/return"). A scenario's fault
// names cannot hold the mark, so a phase is never taken for a fault of its own.
namespace collide::orchestrator::faults {

inline constexpr char kPhaseMark = '/';
inline constexpr std::string_view kDetectionPhase = "detection";
inline constexpr std::string_view kConvergencePhase = "convergence";
inline constexpr std::string_view kConvergedPhase = "converged";
// Under routing: bgp, from the link's return until every route is back (bgp_phases.h).
inline constexpr std::string_view kReturnPhase = "return";

inline std::string phase_name(std::string_view fault, std::string_view phase) {
  return fmt::format("{}{}{}", fault, kPhaseMark, phase);
}

}  // namespace collide::orchestrator::faults
