// Incast through a marking switch port, through `collide run` with configs/fabric/incast.yaml:
// seven senders overrun the receiver's leaf port 7:1. Without DCQCN the marks change nothing and
// the port drops most of what reaches it; with DCQCN the receiver's CNPs cut the senders' rates
// and the port drops a small share of that, at about the same JCT. Needs root (namespaces, BPF,
// AF_XDP).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"
#include "tests/support/report_count.h"
#include "tests/support/shipped_scenario.h"

namespace collide {
namespace {

using testing::count_of;

const std::filesystem::path kScenario =
    std::filesystem::path(COLLIDE_CONFIGS_DIR) / "fabric" / "incast.yaml";

// Without DCQCN seven 0.25 Gb/s senders into one 0.25 Gb/s port lose about 6 frames in 7 at its
// end (measured 0.67 to 0.79 million ppm); with DCQCN measured 0.11 to 0.19 million ppm, the frames
// of the first round trip of each incast, sent at line rate before any CNP can come back.
constexpr double kBaselineDropsPpmAtLeast = 500'000;
constexpr double kDcqcnDropsPpmAtMost = 350'000;
// The port is busy either way: measured JCTs within 1.15x of each other (0.94 to 1.14 s).
constexpr double kJctFactor = 2.0;

struct Outcome {
  double drops_ppm = 0;
  uint64_t ecn_marks = 0;
  uint64_t cnps_sent = 0;
  uint64_t cnps_received = 0;
  double jct_s = 0;
};

// The receiver's leaf port (h0's) and the NICs' CNP counters of a variant's first repetition.
Outcome outcome_of(const nlohmann::json& variant) {
  Outcome o;
  const auto& rep = variant["repetitions"][0];
  o.jct_s = rep.value("jct_seconds", 0.0);
  for (const auto& p : rep["ports"]) {
    if (p.value("tier", "") == "leaf_down" && p.value("link", "").rfind("h0.", 0) == 0) {
      o.drops_ppm = p.value("drops_ppm", 0.0);
      o.ecn_marks = count_of(p["ecn_marks"]);
    }
  }
  for (const auto& n : rep["nics"]) {
    o.cnps_sent += count_of(n["cnps_sent"]);
    o.cnps_received += count_of(n["cnps_received"]);
  }
  return o;
}

class IncastEcnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("ie", "collide-incast-ecn");
  }
  void TearDown() override { run_dir_.reset(); }

  // The scenario as shipped, on a testbed of this test's own name.
  nlohmann::json run() {
    std::string output;
    auto report = testing::run_shipped_scenario(COLLIDE_BIN, kScenario, "incfab", *run_dir_, &output);
    const auto table = output.find("Switch port queues");
    std::cout << (table == std::string::npos ? output : output.substr(table));
    return report;
  }

  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(IncastEcnTest, DcqcnAnswersTheMarksAndTheBottleneckStopsDropping) {
  const nlohmann::json report = run();
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 2u);
  for (const auto& v : report["variants"]) {
    EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
  }
  const Outcome plain = outcome_of(report["variants"][0]);
  const Outcome dcqcn = outcome_of(report["variants"][1]);
  std::cout << "drops ppm " << plain.drops_ppm << " -> " << dcqcn.drops_ppm << ", JCT " << plain.jct_s
            << " s -> " << dcqcn.jct_s << " s, CNPs " << plain.cnps_received << " -> "
            << dcqcn.cnps_received << "\n";
  EXPECT_GT(plain.drops_ppm, kBaselineDropsPpmAtLeast);
  EXPECT_GT(dcqcn.ecn_marks, 0u);
  EXPECT_GT(dcqcn.cnps_sent, 0u);
  EXPECT_EQ(dcqcn.cnps_received, dcqcn.cnps_sent);  // CNPs ride a class of their own: none lost
  EXPECT_LT(dcqcn.drops_ppm, kDcqcnDropsPpmAtMost);
  EXPECT_LT(dcqcn.drops_ppm, plain.drops_ppm / 2);
  ASSERT_GT(plain.jct_s, 0);
  ASSERT_GT(dcqcn.jct_s, 0);
  EXPECT_LT(dcqcn.jct_s, plain.jct_s * kJctFactor);
  EXPECT_LT(plain.jct_s, dcqcn.jct_s * kJctFactor);
  EXPECT_FALSE(run_dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
