// Two jobs at once on a virtual fabric (configs/fabric/two-jobs.yaml), each run alone too: when
// they share the spine's links each is slower together than alone (about 2x: each uplink carries
// both), and when each sits under a leaf of its own they share no link and together is within a
// few percent of alone. Not exactly alone's time: four replays together share this machine's two
// cores where two alone do not, which costs up to ~5% (seen as a narrow interval above 1). The
// layouts run one after the other (at once, their eight replays would contend for this machine's
// cores); within each, every job alone runs right after the jobs together, so a change in what
// else loads the machine falls on both. Needs root (namespaces, BPF, AF_XDP).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

namespace fs = std::filesystem;

class JobsRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    shared_.emplace("js", "collide-jobs-shared");
    apart_.emplace("ja", "collide-jobs-apart");
  }
  void TearDown() override {
    shared_.reset();
    apart_.reset();
  }

  // The shipped scenario on the directory's own testbed, the jobs on the given hosts.
  static fs::path scenario(const testing::CollideRunDir& dir, std::vector<uint32_t> train, std::vector<uint32_t> tenant) {
    YAML::Node s = YAML::LoadFile(std::string(COLLIDE_CONFIGS_DIR) + "/fabric/two-jobs.yaml");
    s["testbed"]["virtual"]["name"] = dir.bed();
    s["jobs"][0]["hosts"] = train;
    s["jobs"][1]["hosts"] = tenant;
    const fs::path path = dir.dir() / "two-jobs.yaml";
    std::ofstream(path) << YAML::Dump(s) << "\n";
    return path;
  }

  // Runs it; returns report.json's interference by job, after checking the run succeeded.
  static std::pair<nlohmann::json, std::string> run(const testing::CollideRunDir& dir, const fs::path& scenario) {
    const auto started = std::chrono::steady_clock::now();
    auto r = process::run_command({COLLIDE_BIN, "run", scenario.string(), "--output", (dir.dir() / "out").string()});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!r.ok()) return {nlohmann::json(), r.status().to_string()};
    std::ifstream in(dir.dir() / "out" / "report.json");
    auto report = nlohmann::json::parse(in, nullptr, false);
    return {report, fmt::format("exit {} after {:.1f} s\n{}", r->exit_code, s, r->output)};
  }

  std::optional<testing::CollideRunDir> shared_, apart_;
};

const nlohmann::json& interference_of(const nlohmann::json& report, const std::string& job) {
  static const nlohmann::json kNone;
  for (const auto& i : report["interference"]) {
    if (i["job"] == job) return i;
  }
  return kNone;
}

TEST_F(JobsRunTest, JobsSharingTheSpineSlowEachOtherAndJobsOnLeavesOfTheirOwnDoNot) {
  // Host h hangs under leaf h % 2.
  const auto [crossing, crossing_log] = run(*shared_, scenario(*shared_, {0, 1}, {2, 3}));
  const auto [own_leaves, own_leaves_log] = run(*apart_, scenario(*apart_, {0, 2}, {1, 3}));
  std::cout << "shared spine: " << crossing_log.substr(0, crossing_log.find('\n')) << "\n"
            << crossing_log.substr(crossing_log.find("Jobs:")) << "own leaves: "
            << own_leaves_log.substr(0, own_leaves_log.find('\n')) << "\n"
            << own_leaves_log.substr(own_leaves_log.find("Jobs:"));
  ASSERT_TRUE(crossing.is_object()) << crossing_log;
  ASSERT_TRUE(own_leaves.is_object()) << own_leaves_log;
  ASSERT_EQ(crossing_log.rfind("exit 0", 0), 0u) << crossing_log;
  ASSERT_EQ(own_leaves_log.rfind("exit 0", 0), 0u) << own_leaves_log;

  // Every variant ran every repetition without a failure, and reports each of its jobs.
  for (const auto* report : {&crossing, &own_leaves}) {
    ASSERT_EQ((*report)["variants"].size(), 3u) << report->dump(2);
    for (const auto& v : (*report)["variants"]) {
      EXPECT_EQ(v["failed_runs"], 0) << v["name"];
      EXPECT_EQ(v["jobs"].size(), v["name"] == "baseline" ? 2u : 1u) << v["name"];
    }
  }
  for (const char* job : {"train", "tenant"}) {
    const nlohmann::json& together = interference_of(crossing, job);
    ASSERT_TRUE(together.is_object()) << crossing.dump(2);
    EXPECT_EQ(together["verdict"], "slower together") << together.dump();
    EXPECT_GT(together["ratio"].get<double>(), 1.3) << together.dump();
    const nlohmann::json& apart_job = interference_of(own_leaves, job);
    ASSERT_TRUE(apart_job.is_object()) << own_leaves.dump(2);
    // No shared link: far from sharing's ~2x, and clear of it by the intervals too.
    EXPECT_LT(apart_job["ratio"].get<double>(), 1.15) << apart_job.dump();
    ASSERT_EQ(apart_job["ratio_ci95"].size(), 2u) << apart_job.dump();
    ASSERT_EQ(together["ratio_ci95"].size(), 2u) << together.dump();
    EXPECT_LT(apart_job["ratio_ci95"][1].get<double>(), together["ratio_ci95"][0].get<double>())
        << apart_job.dump() << "\n" << together.dump();
  }
  EXPECT_FALSE(shared_->namespaces_left());
  EXPECT_FALSE(apart_->namespaces_left());
}

}  // namespace
}  // namespace collide
