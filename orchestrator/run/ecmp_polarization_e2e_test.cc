// ECMP polarization through `collide run` (configs/fabric/ecmp-polarization.yaml): a ring
// all-reduce over 4 hosts on 2 leaves and 2 spines, so each leaf sends two elephant flows up its
// two spine links. Four variants on the same placement, five repetitions each (five sets of
// source ports): one QP per connection under five-tuple ECMP, eight QPs, eight QPs with the
// QP-aware hash, and per-packet spraying. The fabric's own link counters say where the bytes
// went; the report's ECMP KPIs are checked against what a collision means (max/mean 2 with two
// links). Needs root (namespaces, BPF, AF_XDP).
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
#include "tests/support/shipped_scenario.h"

namespace collide {
namespace {

const std::filesystem::path kScenario =
    std::filesystem::path(COLLIDE_CONFIGS_DIR) / "fabric" / "ecmp-polarization.yaml";

// Two flows on one of two links: the busy one carries all, the mean is half. A little ARP and the
// ACKs of the other direction keep it just under 2.
constexpr double kCollided = 1.9;
// Even links, up to the ARP frames, the spray's draws and the retransmissions of frames the
// shaped uplinks dropped (8 unpaced QPs overrun them now and then), which land unevenly: measured
// means 1.004 to 1.016 per variant. Still far from eight QPs' 1.27 to 1.31 and a collision's 2.
constexpr double kEven = 1.1;

class EcmpPolarizationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("ep", "collide-ecmp");
  }
  void TearDown() override { run_dir_.reset(); }

  // The scenario as shipped, on a testbed of this test's own name; prints the summary's table.
  nlohmann::json run() {
    std::string output;
    auto report = testing::run_shipped_scenario(COLLIDE_BIN, kScenario, "ecmp", *run_dir_, &output);
    const auto table = output.find("variant  ");
    std::cout << (table == std::string::npos ? output : output.substr(table));
    return report;
  }

  std::optional<testing::CollideRunDir> run_dir_;
};

const nlohmann::json& variant(const nlohmann::json& report, const std::string& name) {
  return testing::report_variant(report, name);
}

double uplinks_max_mean(const nlohmann::json& repetition) {
  return repetition["ecmp"]["leaf_uplinks"].value("ecmp_max_mean", 0.0);
}

TEST_F(EcmpPolarizationTest, OneQpCollidesForSomeSeedsQpHashAndSprayNeverDo) {
  const nlohmann::json report = run();
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 4u);
  for (const auto& v : report["variants"]) {
    EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
    ASSERT_EQ(v["repetitions"].size(), 5u);
    for (const auto& r : v["repetitions"]) {
      // Four leaf uplinks, four spine downlinks took part in every run.
      EXPECT_EQ(r["ecmp"]["leaf_uplinks"].value("links", 0u), 4u) << v["name"];
      EXPECT_EQ(r["ecmp"]["spine_downlinks"].value("links", 0u), 4u) << v["name"];
    }
    // The roofline: each host sends 2 all-reduces x 2 (n-1)/n x 8 MiB at 0.25 Gb/s, and each
    // leaf's two uplinks carry twice that at twice the rate; no run can beat it.
    const double roofline_s = 2 * 2 * 3.0 / 4 * (8 << 20) * 8 / 0.25e9;
    const nlohmann::json& roofline = v["roofline"];
    EXPECT_NEAR(roofline.value("seconds", 0.0), roofline_s, 1e-9 * roofline_s) << v["name"];
    EXPECT_NEAR(roofline.value("jct_ratio", 0.0), v.value("jct_mean_seconds", 0.0) / roofline_s, 1e-6) << v["name"];
    for (const auto& r : v["repetitions"]) EXPECT_GT(r.value("jct_seconds", 0.0), roofline_s) << v["name"];
  }

  // One QP: the repetitions whose two flows of a leaf took one spine, and those that did not.
  std::vector<double> collided_jct, even_jct;
  for (const auto& r : variant(report, "one-qp")["repetitions"]) {
    const double mm = uplinks_max_mean(r);
    EXPECT_TRUE(mm > kCollided || mm < kEven) << mm;  // two flows, two links: all or half
    (mm > kCollided ? collided_jct : even_jct).push_back(r.value("jct_seconds", 0.0));
  }
  // Each leaf's two flows share a spine with probability 1/2 (the kernel keys its multipath hash
  // at random), so a repetition collides somewhere with probability 3/4: none of 5 does once in
  // 1024 runs.
  EXPECT_FALSE(collided_jct.empty()) << "no seed of five collided";

  // Eight QPs: 16 QPs per leaf over 2 links, never all on one and on average near even (a mean
  // max/mean of 1.5 needs the 16 QPs to split 12:4 or worse on average: under 1% of runs).
  for (const auto& r : variant(report, "eight-qps")["repetitions"]) {
    EXPECT_LT(uplinks_max_mean(r), kCollided);
  }
  EXPECT_LT(variant(report, "eight-qps")["ecmp"]["leaf_uplinks"].value("ecmp_max_mean", 0.0), 1.5);

  // QP-aware hashing and spraying: even on every seed, both tiers.
  std::vector<double> balanced_jct;
  for (const std::string name : {"qp-hash", "spray"}) {
    for (const auto& r : variant(report, name)["repetitions"]) {
      EXPECT_LT(uplinks_max_mean(r), kEven) << name;
      EXPECT_GT(r["ecmp"]["leaf_uplinks"].value("jain", 0.0), 0.99) << name;
      EXPECT_LT(r["ecmp"]["spine_downlinks"].value("ecmp_max_mean", 0.0), kEven) << name;
      balanced_jct.push_back(r.value("jct_seconds", 0.0));
    }
  }

  // JCT follows, if weakly here: a ring runs at the pace of its slowest hop, but one QP's flow
  // reaches only about half of a 0.25 Gb/s link on this 2-core machine, so a shared link slows
  // it less than twice (measured: collided 1.75 to 1.78 s against 1.49 to 1.57 s balanced).
  // The balanced side is the median of its 10 runs: now and then a run's hosts fall behind on the
  // busy machine, their leaf ports drop what their receive rings cannot take, and the resends'
  // timeouts stall that run for seconds (one qp-hash run took 9.5 s with 64 timeouts in CI) -
  // the host's trouble, not the fabric's balance this test is about.
  const auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  const auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  EXPECT_GT(mean(collided_jct), 1.05 * median(balanced_jct))
      << "collided " << mean(collided_jct) << " s, qp-hash and spray " << median(balanced_jct) << " s";
  std::cout << fmt::format("JCT: one QP collided {:.3f} s ({} of 5), not collided {:.3f} s; "
                           "qp-hash and spray {:.3f} s (median)\n",
                           mean(collided_jct), collided_jct.size(), mean(even_jct), median(balanced_jct));
}

}  // namespace
}  // namespace collide
