// `collide compare` on two real runs of the demo scenario (configs/demo.yaml), cut to its baseline
// and its loss on one spine link: once with selective repeat (A), once with go-back-N (B), the
// only difference between the runs. Under loss go-back-N resends a whole window per lost packet and
// the job takes longer; without loss the two transports do the same, and what differs between the
// runs is only this machine's noise, which the comparison must not call a difference. Needs root
// (namespaces, BPF, AF_XDP).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <optional>

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

// Enough repetitions per run for Student's t over them to separate go-back-N's cost from noise
// (measured: its JCT 2.2x selective repeat's, intervals of about +-15%), few enough for the two
// runs to take about a minute on 2 cores.
constexpr int kRepetitions = 5;
constexpr const char* kLoss = "2%";

class CompareRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    selective_repeat_.emplace("ca", "collide-compare-sr");
    go_back_n_.emplace("cb", "collide-compare-gbn");
  }
  void TearDown() override {
    selective_repeat_.reset();
    go_back_n_.reset();
  }

  // The demo with only its baseline and its lossy-spine variant, on the testbed of `dir`, with
  // `recovery` as the transport's loss recovery. Returns the scenario's path.
  static fs::path demo_scenario(const testing::CollideRunDir& dir, const std::string& recovery) {
    YAML::Node s = YAML::LoadFile(std::string(COLLIDE_CONFIGS_DIR) + "/demo.yaml");
    s["name"] = "demo-" + recovery;
    s["testbed"]["virtual"]["name"] = dir.bed();
    s["transport"]["recovery"] = recovery;
    YAML::Node loss_fault;
    for (const YAML::Node& f : s["faults"]) {
      if (f["name"].as<std::string>() == "lossy-spine") loss_fault = f;
    }
    EXPECT_TRUE(loss_fault.IsDefined()) << "configs/demo.yaml has no lossy-spine fault";
    // Twice the demo's loss: go-back-N's cost then stands well out of what a machine shared with
    // other work adds to either run (at 1% and 5 repetitions it sometimes did not).
    loss_fault["probability"] = kLoss;
    YAML::Node faults(YAML::NodeType::Sequence);
    faults.push_back(loss_fault);
    s["faults"] = faults;
    YAML::Node variant;
    variant["name"] = "loss";
    variant["faults"].push_back("lossy-spine");
    YAML::Node variants(YAML::NodeType::Sequence);
    variants.push_back(variant);
    s["runs"]["variants"] = variants;
    s["runs"]["repetitions"] = kRepetitions;
    s["outputs"]["html"] = false;
    s.remove("expect");  // the demo's gates name variants this trimmed scenario does not have
    const fs::path path = dir.dir() / (recovery + ".yaml");
    std::ofstream(path) << YAML::Dump(s) << "\n";
    return path;
  }

  // Runs the scenario in `dir`; returns its results directory and what `collide run` printed.
  static std::pair<fs::path, Result<process::CommandResult>> run(const testing::CollideRunDir& dir,
                                                                 const std::string& recovery) {
    const fs::path out = dir.dir() / "results";
    const auto started = std::chrono::steady_clock::now();
    auto run = process::run_command({COLLIDE_BIN, "run", demo_scenario(dir, recovery).string(), "--output", out.string()});
    std::cout << fmt::format("collide run ({}) took {:.1f} s\n", recovery,
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    return {out, std::move(run)};
  }

  std::optional<testing::CollideRunDir> selective_repeat_, go_back_n_;
};

const nlohmann::json& variant(const nlohmann::json& comparison, const std::string& name) {
  for (const auto& v : comparison["variants"]) {
    if (v["name"] == name) return v;
  }
  static const nlohmann::json kNone;
  ADD_FAILURE() << "no variant " << name << " in " << comparison.dump();
  return kNone;
}

TEST_F(CompareRunsTest, GoBackNIsWorseUnderLossAndTheSameWithout) {
  // Both runs at once, each on a testbed of its own: whatever else loads this machine then loads
  // both alike. One after the other, a change in that load between them once made the second
  // run's baseline 25% slower: a true difference between the runs, which no interval over one
  // run's repetitions can take out.
  auto sr = std::async(std::launch::async, [&] { return run(*selective_repeat_, "selective-repeat"); });
  auto gbn = std::async(std::launch::async, [&] { return run(*go_back_n_, "go-back-n"); });
  const auto [selective_repeat, sr_run] = sr.get();
  const auto [go_back_n, gbn_run] = gbn.get();
  for (const auto* r : {&sr_run, &gbn_run}) {
    ASSERT_TRUE(r->ok());
    ASSERT_EQ((*r)->exit_code, 0) << (*r)->output;
  }
  const fs::path json = selective_repeat_->dir() / "comparison.json";
  auto compared = process::run_command({COLLIDE_BIN, "compare", selective_repeat.string(), go_back_n.string(),
                                        "--json", json.string(), "--html",
                                        (selective_repeat_->dir() / "comparison.html").string()});
  ASSERT_TRUE(compared.ok());
  ASSERT_EQ(compared->exit_code, 0) << compared->output;
  std::cout << compared->output;
  std::ifstream in(json);
  const nlohmann::json c = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(c.is_object());

  const nlohmann::json& baseline = variant(c, "baseline");
  const nlohmann::json& loss = variant(c, "loss");
  ASSERT_TRUE(baseline.is_object() && loss.is_object());
  for (const auto* v : {&baseline, &loss}) {
    EXPECT_EQ((*v)["completed_a"], kRepetitions) << v->dump();
    EXPECT_EQ((*v)["completed_b"], kRepetitions) << v->dump();
    EXPECT_FALSE((*v)["collectives"].empty()) << v->dump();
  }

  // Under loss: go-back-N (B) slows the job more than selective repeat (A), beyond the noise, in
  // its JCT and in its JCT over its own repetition's baseline's.
  const nlohmann::json& loss_jct = loss["jct_seconds"];
  EXPECT_EQ(loss_jct["verdict"], "worse") << loss_jct.dump();
  EXPECT_GT(loss_jct["interval"][0].get<double>(), 1.0) << loss_jct.dump();
  const nlohmann::json& loss_slowdown = loss["slowdown_vs_baseline"];
  EXPECT_EQ(loss_slowdown["verdict"], "worse") << loss_slowdown.dump();
  EXPECT_GT(loss_slowdown["interval"][0].get<double>(), 1.0) << loss_slowdown.dump();

  // Without loss the transports are the same: the JCT shows no difference, and of the collective
  // rows' verdicts (p50 and p99 per kind and size) no more than chance at the 95% level calls one:
  // about 1 in 20; a fifth (2 of the demo's 12) leaves room for the rows sharing their runs.
  EXPECT_EQ(baseline["jct_seconds"]["verdict"], "no detectable difference") << baseline["jct_seconds"].dump();
  int verdicts = 0, differences = 0;
  for (const auto& row : baseline["collectives"]) {
    for (const char* stat : {"p50_us", "p99_us"}) {
      ++verdicts;
      if (row[stat]["verdict"] != "no detectable difference") {
        ++differences;
        std::cout << "baseline " << row["kind"] << " " << row["size_bytes"] << " " << stat << ": "
                  << row[stat].dump() << "\n";
      }
    }
  }
  EXPECT_GE(verdicts, 4);
  EXPECT_LE(differences, verdicts / 5) << baseline.dump();
  EXPECT_FALSE(selective_repeat_->namespaces_left());
  EXPECT_FALSE(go_back_n_->namespaces_left());
}

}  // namespace
}  // namespace collide
