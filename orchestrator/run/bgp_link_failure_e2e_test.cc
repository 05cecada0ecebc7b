// A spine link failing on a fabric routed by BGP with BFD, through `collide run`
// (configs/fabric/bgp-link-failure.yaml): FRR's daemons in every switch route around a link that
// silently drops everything (BFD's detection) or loses its signal, and bring it back into their
// ECMP groups when it returns. A thread of the test watches leaf0's own routing table through the
// run: its route to leaf1's hosts loses spine1 for each failure and gets it back after; the
// report's phase windows, from collide's own watch, agree. The job
// survives a 3 s failure with a retry budget of 2.1 s only because the routes moved. Needs root
// (namespaces, BPF, AF_XDP) and FRR.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "orchestrator/testbed/bgp_fabric.h"
#include "orchestrator/testbed/frr_daemons.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"
#include "tests/support/report_count.h"
#include "tests/support/shipped_scenario.h"

namespace collide {
namespace {

using namespace std::chrono_literals;

const std::filesystem::path kScenario =
    std::filesystem::path(COLLIDE_CONFIGS_DIR) / "fabric" / "bgp-link-failure.yaml";
// Host 1 hangs under leaf1: leaf0 reaches its rank subnet over both spines while both links work.
constexpr const char* kLeaf1Subnet = "198.19.1.0/27";
constexpr auto kWatchEvery = 20ms;

// How many next hops leaf0's BGP route to leaf1's host had, as it changed through the run.
struct RouteChange {
  double at_s = 0;  // from the watch's start
  size_t next_hops = 0;
};

class BgpLinkFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    COLLIDE_REQUIRE(orchestrator::testbed::frr_missing().value_or(""));
    run_dir_.emplace("bg", "collide-bgp-linkfail");
  }
  void TearDown() override { run_dir_.reset(); }

  // Polls leaf0's routes until `done`, recording each change of the route's next hops (0 while
  // the testbed is not up or the route is missing).
  std::vector<RouteChange> watch_leaf0(const std::atomic<bool>& done) const {
    std::vector<RouteChange> changes;
    const std::string leaf0 = run_dir_->bed() + "-leaf0";
    const auto start = std::chrono::steady_clock::now();
    std::optional<size_t> last;
    while (!done.load()) {
      size_t hops = 0;  // also while the namespace is not there (yet, or any more)
      if (auto routes = orchestrator::testbed::read_bgp_routes(leaf0); routes.ok()) {
        for (const auto& [prefix, n] : *routes) {
          if (prefix == kLeaf1Subnet) hops = n;
        }
      }
      if (hops != last) {
        changes.push_back({std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), hops});
        last = hops;
      }
      std::this_thread::sleep_for(kWatchEvery);
    }
    return changes;
  }

  std::optional<testing::CollideRunDir> run_dir_;
};

double jct(const nlohmann::json& variant) { return variant["repetitions"][0].value("jct_seconds", 0.0); }

TEST_F(BgpLinkFailureTest, BgpRoutesAroundAFailedSpineLinkAndTakesItBackWhenItReturns) {
  std::atomic<bool> done{false};
  std::vector<RouteChange> changes;
  std::thread watcher([&] { changes = watch_leaf0(done); });
  std::string output;
  const nlohmann::json report = testing::run_shipped_scenario(COLLIDE_BIN, kScenario, "bgplf", *run_dir_, &output);
  done.store(true);
  watcher.join();
  std::cout << output.substr(std::min(output.size(), output.find("variant")));
  for (const RouteChange& c : changes) std::cout << fmt::format("{:8.3f} s  leaf0 -> {}: {} next hops\n", c.at_s, kLeaf1Subnet, c.next_hops);
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 3u);
  // Every run finishes: a 3 s failure is more than the 2.1 s the QPs on the failed link could
  // retry, so the job survives it only because BGP moved them off the link.
  for (const auto& v : report["variants"]) EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();

  // Through the run leaf0's route had both spines (once the fabric converged), lost spine1 for
  // each of the two failures, and had it back after each: 2 -> 1 -> 2 twice. Each time the link
  // was out of the route for its 3 s of failure and the BGP sessions' return after it (measured
  // 4.1 to 4.2 s: BFD up again, a connect retry, the updates).
  std::vector<double> outages;
  std::optional<double> lost_at;
  bool converged = false;
  for (const RouteChange& c : changes) {
    if (c.next_hops == 2) {
      if (lost_at) outages.push_back(c.at_s - *lost_at);
      lost_at.reset();
      converged = true;
    } else if (c.next_hops == 1 && converged && !lost_at) {
      lost_at = c.at_s;
    } else if (c.next_hops == 0 && converged) {
      break;  // the testbed going away at the end (its links go one by one)
    }
  }
  for (double s : outages) std::cout << fmt::format("spine1 out of leaf0's route for {:.2f} s\n", s);
  ASSERT_GE(outages.size(), 2u) << "leaf0's route to leaf1's hosts did not lose and regain spine1 twice";
  for (double s : outages) {
    EXPECT_GE(s, 2.5);
    EXPECT_LE(s, 8.0);
  }

  // The report times BGP's phases from collide's own watch of every leaf: the silent failure is
  // found by BFD (3 x 100 ms without its packets), the lost signal at once; then the other leaf
  // follows BGP's withdrawal; after the 3 s the sessions and routes come back.
  const auto window_ms = [](const nlohmann::json& variant, const std::string& name) -> std::optional<double> {
    for (const auto& w : variant["repetitions"][0]["fault_windows"]) {
      if (w.value("name", "") != name) continue;
      return static_cast<double>(testing::count_of(w["end_ns"]) - testing::count_of(w["start_ns"])) / 1e6;
    }
    return std::nullopt;
  };
  for (const std::string failure : {"silent-failure", "loss-of-signal"}) {
    const nlohmann::json& v = testing::report_variant(report, failure);
    const auto detection = window_ms(v, failure + "/detection");
    const auto convergence = window_ms(v, failure + "/convergence");
    const auto back = window_ms(v, failure + "/return");
    ASSERT_TRUE(detection && convergence && back) << v["repetitions"][0]["fault_windows"].dump(1);
    std::cout << fmt::format("{}: detection {:.0f} ms, convergence {:.0f} ms, return {:.0f} ms\n", failure,
                             *detection, *convergence, *back);
    if (failure == "silent-failure") {
      EXPECT_GE(*detection, 200.0);  // BFD's 300 ms, from its last packet before the failure
      EXPECT_LE(*detection, 1500.0);
    } else {
      EXPECT_LE(*detection, 300.0);  // the lost signal takes the sessions down at once
    }
    EXPECT_LE(*convergence, 2000.0);
    EXPECT_GE(*back, 100.0);
    EXPECT_LE(*back, 8000.0);
  }

  // The silent failure dropped what crossed the link until BFD called it down; the job stalled
  // only for the transport's recovery of that, far less than the failure's 3 s.
  const nlohmann::json& baseline = testing::report_variant(report, "baseline");
  const nlohmann::json& silent = testing::report_variant(report, "silent-failure");
  uint64_t blackholed = 0;
  for (const auto& w : silent["repetitions"][0]["fault_windows"]) {
    if (w.value("name", "") == "silent-failure") blackholed = testing::count_of(w["packets_acted"]);
  }
  EXPECT_GT(blackholed, 0u);
  std::cout << fmt::format("silent failure: {} packets lost before BFD's detection; JCT {:.2f} s against the baseline's "
                           "{:.2f} s\n",
                           blackholed, jct(silent), jct(baseline));
  EXPECT_LT(jct(silent), jct(baseline) + 2.5);
  EXPECT_FALSE(run_dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
