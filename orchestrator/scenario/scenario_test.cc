#include "orchestrator/scenario/scenario.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace collide::orchestrator {
namespace {

class ScenarioTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("collide-scenario-" + std::to_string(getpid()) + ".yaml")).string();
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  std::string path_;
};

TEST_F(ScenarioTest, EveryScenarioInConfigsLoads) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(COLLIDE_CONFIGS_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    auto s = load_scenario(entry.path().string());
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    ++loaded;
  }
  EXPECT_GE(loaded, 1);
}

TEST_F(ScenarioTest, DemoHasItsDefaultsAndVariants) {
  auto s = load_scenario(std::string(COLLIDE_CONFIGS_DIR) + "/demo.yaml");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->testbed().virtual_().hosts(), 2u);
  EXPECT_EQ(s->faults(0).kind(), v1::Fault::KIND_LOSS);
  EXPECT_DOUBLE_EQ(s->faults(0).probability(), 0.01);
  EXPECT_EQ(s->faults(0).direction(), v1::Fault::DIRECTION_TO_HOST);
  EXPECT_EQ(s->runs().variants(1).transport().recovery(),
            v1::TransportSettings::RECOVERY_SELECTIVE_REPEAT);
  EXPECT_EQ(s->outputs().directory(), "collide-results/demo");
}

TEST_F(ScenarioTest, SemanticErrorsNameFileLineAndField) {
  const std::string path = write(R"(name: bad
workload:
  trace: job.trace
faults:
  - name: f
    kind: loss
    link: h9
    probability: 1%
runs:
  baseline: true
)");
  auto s = load_scenario(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(path + ":7: faults[0].link: no link 'h9'"), std::string::npos)
      << s.status().message();
}

TEST_F(ScenarioTest, RejectsWhatCannotRun) {
  auto msg = [&](const std::string& yaml) {
    auto s = load_scenario(write(yaml));
    return s.ok() ? std::string("ok") : s.status().message();
  };
  EXPECT_NE(msg("name: x\nworkload: {}\nruns: {baseline: true}\n").find("exactly one of trace, synth_model or collectives"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {trace: t}\n").find("nothing to run"), std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {trace: t}\nruns: {baseline: true, variants: [{name: v, "
                "faults: [nope]}]}\n")
                .find("no fault named 'nope'"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {trace: t}\nruns: {baseline: true}\nfaults: [{name: a, kind: "
                "loss, link: h0, probability: 150%}]\n")
                .find("within 0..1"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {trace: t}\nruns: {baseline: true}\ntestbed: {virtual: "
                "{spines: 2}}\nfaults: [{name: a, kind: link-flap, link: leaf0-spine1}]\n")
                .find("needs a duration"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {trace: t}\nruns: {baseline: true}\ntestbed: {virtual: "
                "{hosts: 2, leaves: 2, spines: 0}}\n")
                .find("testbed.virtual"),
            std::string::npos);
  EXPECT_EQ(msg("name: x\nworkload: {trace: t}\nruns: {baseline: true}\n"), "ok");
}

}  // namespace
}  // namespace collide::orchestrator
