#pragma once

#include <string>

namespace collide::cli {

// `collide plan scenario.yaml`: checks the scenario as `collide run` would and lists the points of
// its sweep (each swept field's value at each point), or says that it sweeps nothing. Runs nothing.
void plan_scenario_grid(const std::string& path, bool json);

}  // namespace collide::cli
