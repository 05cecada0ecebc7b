#pragma once

#include <string>

#include <fmt/format.h>

// How a point of a sweep is named wherever it is printed: each swept field and its value as the
// scenario wrote it, "faults[0].probability=1%, transport.qps_per_connection=4"; empty when
// nothing is swept. `settings` is any range of v1::SweepSetting (a scenario's grid point, or a
// results file's).
namespace collide::orchestrator::report {

template <typename Settings>
std::string point_label(const Settings& settings) {
  std::string out;
  for (const auto& s : settings) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", s.field(), s.text());
  return out;
}

}  // namespace collide::orchestrator::report
