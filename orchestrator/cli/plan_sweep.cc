#include "orchestrator/cli/plan_sweep.h"

#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/units.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/scenario/sweep_grid.h"

namespace collide::cli {

void plan_scenario_grid(const std::string& path, bool json) {
  auto grid = orchestrator::load_scenario_grid(path);
  if (!grid.ok()) fail("plan", kExitUsage, grid.status().message());
  const v1::Scenario& first = grid->points.front().scenario;
  // runs.alone adds a run of each job by itself to every repetition.
  const uint32_t variants = static_cast<uint32_t>(first.runs().variants_size()) + (first.runs().baseline() ? 1 : 0) +
                            (first.runs().alone() ? static_cast<uint32_t>(first.jobs_size()) : 0);
  const uint64_t runs_per_point = uint64_t{variants} * first.runs().repetitions();
  // A soak repeats its iterations (baseline and variants once each) until its duration is up.
  const uint64_t soak_ns = first.runs().duration_ns();
  if (json) {
    nlohmann::json out = {{"scenario", first.name()}, {"runs_per_iteration", variants}};
    if (soak_ns != 0) {
      out["duration_ns"] = soak_ns;
      out["duration"] = units::format_duration(std::chrono::nanoseconds(soak_ns));
    } else {
      out["runs_per_point"] = runs_per_point;
    }
    out["fields"] = nlohmann::json::array();
    for (const auto& f : grid->fields) out["fields"].push_back({{"field", f.field}, {"line", f.line}, {"values", f.values}});
    out["points"] = nlohmann::json::array();
    for (size_t k = 0; k < grid->points.size(); ++k) {
      nlohmann::json settings = nlohmann::json::array();
      for (const auto& s : grid->points[k].settings) {
        settings.push_back({{"field", s.field()}, {"text", s.text()}, {"value", s.value()}});
      }
      out["points"].push_back({{"point", k + 1}, {"directory", fmt::format("point-{}", k + 1)}, {"settings", settings}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  const std::string soak =
      fmt::format("iterations of {} run(s) (baseline and variants) for {}", variants,
                  units::format_duration(std::chrono::nanoseconds(soak_ns)));
  if (!grid->swept()) {
    if (soak_ns != 0) {
      std::cout << fmt::format("{}: sweeps nothing: one point, a soak: {}\n", path, soak);
    } else {
      std::cout << fmt::format("{}: sweeps nothing: one point of {} run(s)\n", path, runs_per_point);
    }
    return;
  }
  if (soak_ns != 0) {
    std::cout << fmt::format("{}: {} points, each a soak: {}; {} in all\n", path, grid->points.size(), soak,
                             units::format_duration(std::chrono::nanoseconds(soak_ns * grid->points.size())));
  } else {
    std::cout << fmt::format("{}: {} points, each {} run(s) (baseline and variants x repetitions), {} in all\n", path,
                             grid->points.size(), runs_per_point, runs_per_point * grid->points.size());
  }
  std::cout << fmt::format("{:>6}", "point");
  for (const auto& f : grid->fields) std::cout << fmt::format("  {:>{}}", f.field, f.field.size());
  std::cout << "\n";
  for (size_t k = 0; k < grid->points.size(); ++k) {
    std::cout << fmt::format("{:>6}", k + 1);
    for (size_t i = 0; i < grid->fields.size(); ++i) {
      const auto& s = grid->points[k].settings[i];
      std::cout << fmt::format("  {:>{}}", s.text(), grid->fields[i].field.size());
    }
    std::cout << "\n";
  }
}

}  // namespace collide::cli
