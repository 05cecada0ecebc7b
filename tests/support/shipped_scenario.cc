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
                                    std::string* output, const CollideRunDir::Edits& edits, int exit_code) {
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
  EXPECT_EQ(run->exit_code, exit_code) << run->output;
  std::ifstream report_file(out / "report.json");
  auto report = nlohmann::json::parse(report_file, nullptr, false);
  EXPECT_TRUE(report.is_object()) << run->output;
  std::cout << fmt::format("collide run took {:.1f} s\n", seconds);
  if (output != nullptr) *output = run->output;
  return report.is_object() ? report : nlohmann::json(nullptr);
}

namespace {

// The first item of `owner[list]` that `matches`; none fails the test (saying `what` was looked for)
// and gives a null.
template <typename Matches>
const nlohmann::json& find_item(const nlohmann::json& owner, const char* list, Matches matches, const std::string& what) {
  static const nlohmann::json none;
  if (owner.is_object() && owner.contains(list)) {
    for (const auto& item : owner[list]) {
      if (matches(item)) return item;
    }
  }
  ADD_FAILURE() << "no " << what;
  return none;
}

// A variant's name for a failure message (a variant that was not found is null).
std::string name_of(const nlohmann::json& variant) { return variant.is_object() ? variant.value("name", "?") : "?"; }

}  // namespace

const nlohmann::json& report_variant(const nlohmann::json& report, const std::string& name) {
  return find_item(report, "variants", [&](const nlohmann::json& v) { return v.value("name", "") == name; },
                   "variant " + name + " in the report");
}

const nlohmann::json& report_port(const nlohmann::json& variant, const std::string& link, const std::string& end) {
  return find_item(
      variant, "ports",
      [&](const nlohmann::json& p) { return p.value("link", "") == link && p.value("end", "") == end; },
      "port " + link + " at " + end + " in variant " + name_of(variant));
}

const nlohmann::json& report_job(const nlohmann::json& variant, const std::string& name) {
  return find_item(variant, "jobs", [&](const nlohmann::json& j) { return j.value("name", "") == name; },
                   "job " + name + " in variant " + name_of(variant));
}

double report_job_jct(const nlohmann::json& variant, const std::string& name) {
  const nlohmann::json& j = report_job(variant, name);
  return j.is_object() && !j["jct_seconds"].empty() ? j["jct_seconds"][0].get<double>() : 0;
}

}  // namespace collide::testing
