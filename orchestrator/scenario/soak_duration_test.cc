// runs.duration_ns: a soak's length, read with the units of every other duration and checked at
// its line like the rest of a scenario.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "orchestrator/scenario/scenario.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator {
namespace {

class SoakDurationTest : public ::testing::Test {
 protected:
  // A scenario whose `runs:` block is `runs` (line 8 is its first field).
  Result<v1::Scenario> load(const std::string& runs, const std::string& expect = "") {
    path_ = std::filesystem::temp_directory_path() / fmt::format("collide-soak-{}.yaml", getpid());
    std::ofstream(path_) << fmt::format(R"(name: soak
workload:
  collectives: {{kind: all-reduce, bytes: 1MiB}}
faults:
  - {{name: lossy, kind: loss, link: h1, probability: 1%}}
runs:
  variants: [{{name: loss, faults: [lossy]}}]
{}{})",
                                        runs, expect);
    return load_scenario(path_.string());
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(SoakDurationTest, TakesHoursMinutesAndSecondsAndLeavesRepetitionsUnset) {
  for (const auto& [text, ns] : {std::pair<const char*, uint64_t>{"8h", 8 * 3600'000'000'000ull},
                                 {"10m", 600'000'000'000ull}, {"90s", 90'000'000'000ull},
                                 {"1.5h", 5400'000'000'000ull}}) {
    auto s = load(fmt::format("  duration_ns: {}\n", text));
    ASSERT_THAT(s, IsOk()) << text;
    EXPECT_EQ(s->runs().duration_ns(), ns) << text;
    EXPECT_EQ(s->runs().repetitions(), 0u) << "a soak runs as many as its duration holds";
  }
  auto fixed = load("  repetitions: 3\n");
  ASSERT_THAT(fixed, IsOk());
  EXPECT_EQ(fixed->runs().duration_ns(), 0u);
  auto plain = load("");
  ASSERT_THAT(plain, IsOk());
  EXPECT_EQ(plain->runs().repetitions(), 1u) << "no duration: one repetition by default, as before";
}

TEST_F(SoakDurationTest, RepetitionsWithADurationAreRefusedNamingBoth) {
  auto s = load("  repetitions: 3\n  duration_ns: 10m\n");
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path_.string() + ":9: runs.duration_ns: runs.duration_ns and "
                                                       "runs.repetitions (3) are both given"),
            std::string::npos)
      << s.status().message();
}

TEST_F(SoakDurationTest, ABadDurationNamesFileLineAndField) {
  const std::pair<const char*, const char*> cases[] = {
      {"8 parsecs", "unit 'parsecs' does not fit this field"},
      {"-1h", "out of range"},
      {"soon", "'soon' is not a number"},
      {"0", "0 does not run; leave the field out"},
  };
  for (const auto& [text, why] : cases) {
    auto s = load(fmt::format("  duration_ns: {}\n", text));
    ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument)) << text;
    EXPECT_NE(s.status().message().find(path_.string() + ":8: runs.duration_ns: "), std::string::npos)
        << s.status().message();
    EXPECT_NE(s.status().message().find(why), std::string::npos) << s.status().message();
  }
}

TEST_F(SoakDurationTest, TheFieldIsNamedWithItsUnitLikeEveryOtherDuration) {
  auto s = load("  duration: 8h\n");
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(":8: runs.duration: unknown field"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("duration_ns"), std::string::npos) << s.status().message();
}

// An interval over repetitions needs two of them; a soak's number is known only at its end, so its
// gates are not refused for it (with fixed repetitions they still are).
TEST_F(SoakDurationTest, AnIntervalGateIsAcceptedForASoak) {
  const std::string gate = "expect:\n  - {slowdown_below: 2, variant: loss}\n";
  EXPECT_THAT(load("  baseline: true\n  duration_ns: 1h\n", gate), IsOk());
  EXPECT_THAT(load("  baseline: true\n", gate), StatusIs(StatusCode::kInvalidArgument));
}

TEST_F(SoakDurationTest, AScenarioMadeInMemoryIsCheckedToo) {
  auto s = load("  duration_ns: 1h\n");
  ASSERT_THAT(s, IsOk());
  v1::Scenario both = *s;
  both.mutable_runs()->set_repetitions(2);
  EXPECT_THAT(validate_scenario(both, "memory"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(validate_scenario(*s, "memory"), IsOk());
}

}  // namespace
}  // namespace collide::orchestrator
