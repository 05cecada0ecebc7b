#include "tests/support/shipped_scenario.h"

#include <chrono>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/process.h"

namespace collide::testing {

nlohmann::json run_shipped_scenario(const std::string& collide_bin, const std::filesystem::path& scenario,
                                    const std::string& shipped_bed, const CollideRunDir& run_dir,
                                    std::string* output, const CollideRunDir::Edits& edits) {
  // The testbed gets this run's own name, so that runs beside it do not share namespaces.
  const auto path = run_dir.scenario_on_own_bed(scenario, shipped_bed, edits);
  EXPECT_FALSE(path.empty()) << scenario << " cannot be read, names no testbed " << shipped_bed
                             << " or lacks a text to edit";
  if (path.empty()) return nullptr;
  const auto out = run_dir.dir() / "results";
  const auto started = std::chrono::steady_clock::now();
  auto run = process::run_command({collide_bin, "run", path.string(), "--output", out.string()});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_TRUE(run.ok()) << run.status().to_string();
  if (!run.ok()) return nullptr;
  EXPECT_EQ(run->exit_code, 0) << run->output;
  std::ifstream report_file(out / "report.json");
  auto report = nlohmann::json::parse(report_file, nullptr, false);
  EXPECT_TRUE(report.is_object()) << run->output;
  std::cout << fmt::format("collide run took {:.1f} s\n", seconds);
  if (output != nullptr) *output = run->output;
  return report.is_object() ? report : nlohmann::json(nullptr);
}

const nlohmann::json& report_variant(const nlohmann::json& report, const std::string& name) {
  static const nlohmann::json none;
  if (!report.is_object() || !report.contains("variants")) {
    ADD_FAILURE() << "no variants in the report";
    return none;
  }
  for (const auto& v : report["variants"]) {
    if (v.value("name", "") == name) return v;
  }
  ADD_FAILURE() << "no variant " << name;
  return none;
}

const nlohmann::json& report_port(const nlohmann::json& variant, const std::string& link, const std::string& end) {
  static const nlohmann::json none;
  if (variant.is_object() && variant.contains("ports")) {
    for (const auto& p : variant["ports"]) {
      if (p.value("link", "") == link && p.value("end", "") == end) return p;
    }
  }
  ADD_FAILURE() << "no port " << link << " at " << end << " in variant " << variant.value("name", "?");
  return none;
}

const nlohmann::json& report_job(const nlohmann::json& variant, const std::string& name) {
  static const nlohmann::json none;
  if (variant.is_object() && variant.contains("jobs")) {
    for (const auto& j : variant["jobs"]) {
      if (j.value("name", "") == name) return j;
    }
  }
  ADD_FAILURE() << "no job " << name << " in variant " << variant.value("name", "?");
  return none;
}

}  // namespace collide::testing
