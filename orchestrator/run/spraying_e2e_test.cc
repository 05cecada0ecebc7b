// Per-packet spraying against the loss recoveries through `collide run`
// (configs/fabric/spraying.yaml): a ring all-reduce over 4 hosts on 2 leaves and 2 spines, 4 QPs
// per connection, first under five-tuple ECMP with go-back-N, then sprayed under go-back-N,
// selective repeat and the out-of-order mode. The fabric drops nothing (deep uplink buffers), so
// every resend is one that reordering caused: go-back-N collapses under it, the out-of-order mode
// resends almost nothing and keeps the ECMP baseline's pace. Needs root (namespaces, BPF, AF_XDP).
#include <algorithm>
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
    std::filesystem::path(COLLIDE_CONFIGS_DIR) / "fabric" / "spraying.yaml";

// Thresholds from three runs on a loaded 2-core machine, each NIC paced at its link's rate
// (numbers in README's fabric section): sprayed out-of-order rates 0.056 to 0.080 under selective
// repeat and the out-of-order mode, 0.38 to 0.42 under go-back-N; go-back-N's resends 68 to 73
// times the out-of-order mode's and 39 to 43% of all it sent, its JCT 1.64 to 1.73 times as long
// (the links are the bottleneck, so its JCT grows with what it sends twice); the out-of-order
// mode's resends about 1% of its packets and its JCT 0.72 to 0.74 times the baseline's (five-tuple
// ECMP hashes some QPs onto one uplink; spraying evens them out).
constexpr double kSprayReorders = 0.02;        // out-of-order rate under spray, every mode
constexpr double kGoBackNResendsTimes = 20;    // go-back-N's resends against the out-of-order mode's
constexpr double kGoBackNResendShare = 0.25;   // go-back-N's resends per packet it sent
constexpr double kGoBackNSlower = 1.4;         // go-back-N's JCT against the out-of-order mode's
constexpr double kSpuriousResends = 0.02;      // the out-of-order mode's resends per packet sent
constexpr double kNearBaseline = 1.75;         // the out-of-order mode's JCT against the baseline's

class SprayingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("sp", "collide-spray");
  }
  void TearDown() override { run_dir_.reset(); }

  nlohmann::json run() { return testing::run_shipped_scenario(COLLIDE_BIN, kScenario, "spray", *run_dir_); }

  std::optional<testing::CollideRunDir> run_dir_;
};

const nlohmann::json& variant(const nlohmann::json& report, const std::string& name) {
  return testing::report_variant(report, name);
}

double counter(const nlohmann::json& v, const char* field) {
  return v.contains(field) ? static_cast<double>(testing::count_of(v[field])) : 0.0;
}

double dropped(const nlohmann::json& v) {
  double drops = 0;
  for (const auto& tier : v["port_tiers"]) drops += counter(tier, "drops");
  return drops;
}

TEST_F(SprayingTest, GoBackNCollapsesUnderSprayingTheOutOfOrderModeDoesNot) {
  const nlohmann::json report = run();
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 4u);
  for (const auto& v : report["variants"]) {
    EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
    std::cout << fmt::format("{:24} out-of-order rate {:.4f}  resends {:>7}  of {:>7} sent  drops {}  JCT {:.3f} s\n",
                             v["name"].get<std::string>(), v.value("out_of_order_rate", 0.0),
                             counter(v, "retransmitted_packets"), counter(v, "packets_sent"), dropped(v),
                             v.value("jct_mean_seconds", 0.0));
  }
  const auto& ecmp = variant(report, "baseline");
  const auto& gbn = variant(report, "spray-go-back-n");
  const auto& sr = variant(report, "spray-selective-repeat");
  const auto& ooo = variant(report, "spray-out-of-order");

  // ECMP keeps each QP on one path: nothing arrives out of order. Spraying reorders, whatever the
  // mode (go-back-N's own resends add to it).
  EXPECT_LT(ecmp.value("out_of_order_rate", 1.0), 0.001);
  for (const auto* v : {&gbn, &sr, &ooo}) {
    EXPECT_GT(v->value("out_of_order_rate", 0.0), kSprayReorders) << (*v)["name"];
  }

  // Go-back-N takes each gap for a loss and resends the window behind it, again and again.
  const double ooo_resends = counter(ooo, "retransmitted_packets");
  EXPECT_GT(counter(gbn, "retransmitted_packets"), kGoBackNResendsTimes * std::max(ooo_resends, 1.0));
  // A quarter and more of its line time goes to packets the receiver already had or will drop.
  EXPECT_GT(counter(gbn, "retransmitted_packets"), kGoBackNResendShare * counter(gbn, "packets_sent"));
  EXPECT_GT(gbn.value("jct_mean_seconds", 0.0), kGoBackNSlower * ooo.value("jct_mean_seconds", 0.0));

  // The out-of-order mode resends (almost) only what was lost; the fabric lost nothing.
  EXPECT_LE(ooo_resends, dropped(ooo) + kSpuriousResends * counter(ooo, "packets_sent"));
  EXPECT_GT(ooo.value("jct_mean_seconds", 0.0), 0.0);
  EXPECT_LT(ooo.value("jct_mean_seconds", 0.0), kNearBaseline * ecmp.value("jct_mean_seconds", 0.0));
}

}  // namespace
}  // namespace collide
