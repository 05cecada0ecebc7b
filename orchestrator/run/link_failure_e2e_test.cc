// A spine link failing in phases through `collide run` (configs/fabric/link-failure.yaml): 50 ms
// of blackhole until detection, then the link down and the spine without routes to the failed
// leaf's hosts until routing converges (2 s, or 100 ms), then routes around it until the link
// returns 3 s after it failed. Each phase is measured (its window and the packets it lost, from
// the fault program's counters and the spine's own count of packets it could not route), loss
// stops once routing has converged, and the ring stalls through the slow convergence and
// recovers. Needs root (namespaces, BPF, AF_XDP).
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"
#include "tests/support/report_count.h"
#include "tests/support/shipped_scenario.h"

namespace collide {
namespace {

const std::filesystem::path kScenario =
    std::filesystem::path(COLLIDE_CONFIGS_DIR) / "fabric" / "link-failure.yaml";

// How late a scheduled change may land on a loaded 2-core machine (a thread waking, `ip` runs:
// the link's return is one `ip -batch` for its addresses, routes and neighbours and one for the
// converged routes withdrawn, 80 to 160 ms together here while the replayers spin).
constexpr double kLateAtMost_ms = 100;

class LinkFailureRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("lf", "collide-linkfail");
  }
  void TearDown() override { run_dir_.reset(); }

  std::optional<testing::CollideRunDir> run_dir_;
};

struct Phase {
  double held_ms = 0;
  uint64_t lost = 0;
  bool held = false;
};

// A window of the first repetition, by name.
Phase phase(const nlohmann::json& variant, const std::string& name) {
  for (const auto& w : variant["repetitions"][0]["fault_windows"]) {
    if (w.value("name", "") != name) continue;
    Phase p;
    const uint64_t start = testing::count_of(w["start_ns"]);
    const uint64_t end = testing::count_of(w["end_ns"]);
    p.held = end > start;  // times from the run's first op
    p.held_ms = p.held ? static_cast<double>(end - start) / 1e6 : 0;
    p.lost = w.contains("packets_acted") ? testing::count_of(w["packets_acted"]) : 0;
    std::cout << fmt::format("{}: {} {:.1f} ms, {} packets lost\n", variant.value("name", ""), name,
                             p.held_ms, p.lost);
    return p;
  }
  ADD_FAILURE() << "no fault window " << name << " in " << variant.value("name", "");
  return {};
}

double jct(const nlohmann::json& variant) { return variant["repetitions"][0].value("jct_seconds", 0.0); }

TEST_F(LinkFailureRunTest, LossOnlyUntilRoutingConvergesAndTheRingStallsAndRecovers) {
  const nlohmann::json report = testing::run_shipped_scenario(COLLIDE_BIN, kScenario, "lfail", *run_dir_);
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 3u);
  for (const auto& v : report["variants"]) {
    // Every run finishes: the failure stalls the job within the transport's retry budget.
    EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
    ASSERT_EQ(v["repetitions"].size(), 1u);
  }
  const double baseline = jct(testing::report_variant(report, "baseline"));
  for (const auto& [name, convergence_ms] : {std::pair{"slow-convergence", 2000.0}, std::pair{"fast-convergence", 100.0}}) {
    const nlohmann::json& v = testing::report_variant(report, name);
    const Phase whole = phase(v, name);
    const Phase detection = phase(v, std::string(name) + "/detection");
    const Phase convergence = phase(v, std::string(name) + "/convergence");
    const Phase converged = phase(v, std::string(name) + "/converged");
    // The failure holds from its detection phase to the link's return.
    EXPECT_GE(whole.held_ms, 3000 - 1);
    EXPECT_LE(whole.held_ms, 3000 + 2 * kLateAtMost_ms);
    // Detection: the fault program's window, and every frame on the link both ways lost in it.
    EXPECT_NEAR(detection.held_ms, 50, 1);
    EXPECT_GT(detection.lost, 0u);
    // Convergence as configured from the moment the link went down, the routes' installation on
    // top.
    EXPECT_GE(convergence.held_ms, convergence_ms - 1);
    EXPECT_LE(convergence.held_ms, convergence_ms + kLateAtMost_ms);
    // Once converged, until the link returns, the spine drops nothing.
    EXPECT_TRUE(converged.held);
    EXPECT_NEAR(converged.held_ms, 3000 - 50 - convergence_ms, 2 * kLateAtMost_ms);
    EXPECT_EQ(converged.lost, 0u);
    std::cout << fmt::format("{}: JCT {:.2f} s against the baseline's {:.2f} s\n", name, jct(v), baseline);
  }
  // Two seconds without routes to leaf 0 through spine 1: the flows hashed there (8 a hop, so
  // some of each hop's) lose everything, and the ring waits for them at least one attempt
  // (1.07 s); it then recovers (every run finished, above). Measured here: 2.0 to 3.2 s over the
  // baseline. How much longer than the fast convergence's it is varies with which flows the
  // detection blackhole hit (0.65 to 2.2 s), so that is printed, not judged.
  const nlohmann::json& slow = testing::report_variant(report, "slow-convergence");
  EXPECT_GT(phase(slow, "slow-convergence/convergence").lost, 0u);
  EXPECT_GT(jct(slow), baseline + 0.5);
}

}  // namespace
}  // namespace collide
