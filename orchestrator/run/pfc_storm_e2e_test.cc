// A PFC storm from one host (configs/fabric/pfc-storm.yaml, one repetition): unchecked, the leaf
// port it pauses stays held for the storm and the flows through it wait; with the switches' PFC
// watchdog, each detection comes the configured detect time after the hold began and each
// restoration the configured restore time after the detection, within a few milliseconds, and the
// stormed job finishes sooner. The job beside it, which never sends to the stormed host, is slowed
// by the pauses that spread and reported as a victim. Needs root (namespaces, BPF, AF_XDP).
#include <algorithm>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"
#include "tests/support/report_count.h"
#include "tests/support/shipped_scenario.h"

namespace collide {
namespace {

using testing::count_of;
using testing::ms_of;
using testing::report_job_jct;
using testing::report_port;
using testing::report_variant;

// Within a few milliseconds: the switches look every 500 us, on a machine of 2 busy cores.
constexpr double kToleranceMs = 5;

class PfcStormTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    dir_.emplace("ps", "collide-pfc-storm");
  }
  void TearDown() override { dir_.reset(); }
  std::optional<testing::CollideRunDir> dir_;
};

TEST_F(PfcStormTest, UncheckedTheStormHoldsTheLeafPortAndTheWatchdogActsOnTime) {
  // As the scenario has them (the edits below fail the run when it does not): the watchdog's
  // times, the storm's length and rate.
  const double detect_ms = 50, restore_ms = 100, storm_ms = 600;
  const double storm_frames = 1000 * storm_ms / 1e3;
  const testing::CollideRunDir::Edits as_shipped = {{"detect_ns: 50ms", "detect_ns: 50ms"},
                                                    {"restore_ns: 100ms", "restore_ns: 100ms"},
                                                    {"duration_ns: 600ms", "duration_ns: 600ms"},
                                                    {"pfc_frames_per_second: 1000\n", "pfc_frames_per_second: 1000\n"},
                                                    // One repetition: enough to show it, light on CI.
                                                    {"  repetitions: 2\n", "  repetitions: 1\n"}};
  std::string log;
  const auto report = testing::run_shipped_scenario(COLLIDE_BIN, std::string(COLLIDE_CONFIGS_DIR) + "/fabric/pfc-storm.yaml",
                                                    "pfcst", *dir_, &log, as_shipped);
  ASSERT_TRUE(report.is_object());
  std::cout << log.substr(std::min(log.size(), log.find("Jobs:")));
  for (const auto& v : report["variants"]) EXPECT_EQ(v["failed_runs"], 0) << v["name"];
  const nlohmann::json& baseline = report_variant(report, "baseline");
  const nlohmann::json& unchecked = report_variant(report, "storm-unchecked");
  const nlohmann::json& watched = report_variant(report, "storm-watchdog");
  ASSERT_TRUE(baseline.is_object() && unchecked.is_object() && watched.is_object());

  // The storm was sent as asked: 1000 frames a second for its window, in both variants (frames due
  // while this busy machine could not run the storm's thread are skipped, not sent late).
  for (const nlohmann::json* v : {&unchecked, &watched}) {
    const auto& windows = (*v)["repetitions"][0]["fault_windows"];
    ASSERT_EQ(windows.size(), 1u) << v->dump(1);
    EXPECT_EQ(windows[0].value("kind", ""), "pfc-storm");
    EXPECT_NEAR(ms_of(windows[0]["end_ns"]) - ms_of(windows[0]["start_ns"]), storm_ms, 30) << windows[0].dump();
    EXPECT_NEAR(static_cast<double>(count_of(windows[0]["packets_matched"])), storm_frames, storm_frames * 0.05)
        << windows[0].dump();
    EXPECT_GE(static_cast<double>(count_of(windows[0]["packets_acted"])), storm_frames * 0.8) << windows[0].dump();
  }

  // Unchecked: h0's leaf port is held for the whole storm, and no watchdog acts.
  const nlohmann::json& held = report_port(unchecked, "h0.nic0-leaf0", "leaf0");
  ASSERT_TRUE(held.is_object());
  std::cout << fmt::format("unchecked: h0's leaf port held {:.1f} ms by {} pauses\n", ms_of(held["paused_ns"]),
                           count_of(held["pause_frames"]));
  EXPECT_GE(ms_of(held["paused_ns"]), storm_ms - 30) << held.dump();
  EXPECT_GE(static_cast<double>(count_of(held["pause_frames"])), storm_frames * 0.8) << held.dump();
  EXPECT_TRUE(!held.contains("watchdog_events") || held["watchdog_events"].empty()) << held.dump();
  // The stormed job waits the storm out.
  const double base_jct = report_job_jct(baseline, "stormed");
  const double unchecked_jct = report_job_jct(unchecked, "stormed");
  const double watched_jct = report_job_jct(watched, "stormed");
  std::cout << fmt::format("stormed job: baseline {:.3f} s, unchecked {:.3f} s, watchdog {:.3f} s\n", base_jct,
                           unchecked_jct, watched_jct);
  EXPECT_GT(unchecked_jct, base_jct + storm_ms / 1e3 * 0.8);
  // The bystander never sends to h0, but its frames to h2 come down the spine port that leaf0's
  // backlog for h0 pauses: the report names it a victim.
  const nlohmann::json& bystander = testing::report_job(unchecked, "bystander");
  EXPECT_TRUE(bystander.value("spared", false)) << bystander.dump();
  EXPECT_TRUE(bystander.value("victim", false)) << bystander.dump();
  EXPECT_FALSE(testing::report_job(unchecked, "stormed").value("spared", false));
  EXPECT_NE(log.find("Victims: jobs that no fault of their variant acts on"), std::string::npos);

  // With the watchdog: detections and restorations on time, and the job done sooner.
  const nlohmann::json& watched_port = report_port(watched, "h0.nic0-leaf0", "leaf0");
  ASSERT_TRUE(watched_port.is_object());
  const auto& events = watched_port["watchdog_events"];
  ASSERT_FALSE(events.empty()) << watched_port.dump(1);
  size_t restored = 0;
  for (const auto& e : events) {
    const double detected_after = ms_of(e["detected_ns"]) - ms_of(e["held_since_ns"]);
    std::cout << fmt::format("watchdog: held {:.2f} ms before detection", detected_after);
    EXPECT_NEAR(detected_after, detect_ms, kToleranceMs) << e.dump();
    if (e.contains("restored_ns") && count_of(e["restored_ns"]) != 0) {
      const double restored_after = ms_of(e["restored_ns"]) - ms_of(e["detected_ns"]);
      std::cout << fmt::format(", restored {:.2f} ms after it", restored_after);
      EXPECT_NEAR(restored_after, restore_ms, kToleranceMs) << e.dump();
      ++restored;
    }
    std::cout << "\n";
  }
  EXPECT_GE(restored, 1u);
  EXPECT_LT(watched_jct, unchecked_jct);
  EXPECT_FALSE(dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
