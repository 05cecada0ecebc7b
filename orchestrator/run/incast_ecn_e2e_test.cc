// Incast through a marking switch port, through `collide run` with configs/fabric/incast.yaml:
// seven senders overrun the receiver's leaf port 7:1. Without DCQCN the marks change nothing and
// the port drops most of what reaches it; with DCQCN the receiver's CNPs cut the senders' rates
// and the port drops a small share of that (about 1%), in no more time. Needs root (namespaces, BPF,
// AF_XDP).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
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

// Without DCQCN seven 0.25 Gb/s senders into one 0.25 Gb/s port lose a large share of what
// reaches it (measured 0.24 to 0.40 million ppm a repetition, 0.34 to 0.36 as the median of three;
// a QP waits 268 ms before resending a lost tail, and meanwhile offers nothing); with DCQCN a small
// share, the frames of the first round trip of each incast, sent at line rate before any CNP can
// come back (measured 0 to 11,300 ppm: the NICs send at their links' rate, so a cut acts at once
// on what they have not sent). Each judged on the median of the scenario's three repetitions.
constexpr double kBaselineDropsPpmAtLeast = 100'000;
constexpr double kDcqcnDropsPpmAtMost = 50'000;
// The port is busy either way, so DCQCN costs no time: without it the resends of what the port
// dropped take longer still (measured medians 0.64 and 0.78 s with DCQCN against 1.29 and 1.30 s).
constexpr double kDcqcnJctAtMost = 1.25;  // x the baseline's

struct Outcome {
  double drops_ppm = 0;
  uint64_t ecn_marks = 0;
  uint64_t cnps_sent = 0;
  uint64_t cnps_received = 0;
  double jct_s = 0;
};

// The receiver's leaf port (h0's) and the NICs' CNP counters of one repetition.
Outcome outcome_of_repetition(const nlohmann::json& rep) {
  Outcome o;
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

// A variant's figures as the median repetition shows them (the scenario runs three): one run's
// outlier, a burst of other work on the machine, moves neither side of a comparison. CNPs are
// summed, since every one must arrive.
Outcome outcome_of(const nlohmann::json& variant) {
  std::vector<Outcome> reps;
  for (const auto& rep : variant["repetitions"]) reps.push_back(outcome_of_repetition(rep));
  if (reps.empty()) {
    ADD_FAILURE() << "no repetitions in " << variant.value("name", "");
    return {};
  }
  auto median = [&](auto field) {
    std::vector<double> values;
    for (const Outcome& o : reps) values.push_back(static_cast<double>(field(o)));
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  Outcome o;
  o.drops_ppm = median([](const Outcome& r) { return r.drops_ppm; });
  o.jct_s = median([](const Outcome& r) { return r.jct_s; });
  o.ecn_marks = static_cast<uint64_t>(median([](const Outcome& r) { return r.ecn_marks; }));
  for (const Outcome& r : reps) {
    std::cout << fmt::format("  {}: drops {:.0f} ppm, {} marks, JCT {:.3f} s\n",
                             variant.value("name", ""), r.drops_ppm, r.ecn_marks, r.jct_s);
    o.cnps_sent += r.cnps_sent;
    o.cnps_received += r.cnps_received;
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
  EXPECT_LT(dcqcn.drops_ppm, plain.drops_ppm / 10);
  ASSERT_GT(plain.jct_s, 0);
  ASSERT_GT(dcqcn.jct_s, 0);
  EXPECT_LT(dcqcn.jct_s, plain.jct_s * kDcqcnJctAtMost);
  EXPECT_FALSE(run_dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
