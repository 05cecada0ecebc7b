// A 3-tier fabric through `collide run` (configs/fabric/three-tier.yaml): 4 hosts under 4 leaves
// in 2 pods, joined by 2 super-spines, run a ring all-reduce in rank order. The switches' own port
// counters say where the bytes went: all 4 hops of the ring through the spines, the 2 between the
// pods through the super-spines, and what the spines sent up is what the super-spines received;
// the spines' own hash keys spread the flows over the super-spines.
// Needs root (namespaces, BPF, AF_XDP).
#include <filesystem>
#include <iostream>
#include <map>
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
    std::filesystem::path(COLLIDE_CONFIGS_DIR) / "fabric" / "three-tier.yaml";

// The payload of one hop of the ring over a run: 2 all-reduces of 8 MiB, 2 (n-1)/n of each
// (n = 4). Frames add their headers (about 6% at 1 KiB) and the ACKs going back.
constexpr double kHopBytes = 2 * 8.0 * (1 << 20) * 2 * 3 / 4;
constexpr double kFramingAtMost = 1.15;
constexpr double kFrameBytesAtMost = 1024 + 100;  // a data frame at the scenario's 1 KiB MTU

class ThreeTierRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("t3", "collide-threetier");
  }
  void TearDown() override { run_dir_.reset(); }

  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(ThreeTierRunTest, HopsBetweenPodsCrossTheSuperSpinesAndTheCountersAgree) {
  const nlohmann::json report = testing::run_shipped_scenario(COLLIDE_BIN, kScenario, "tier3", *run_dir_);
  ASSERT_TRUE(report.is_object());
  const nlohmann::json& v = testing::report_variant(report, "baseline");
  EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
  ASSERT_EQ(v["repetitions"].size(), 2u);
  for (const auto& r : v["repetitions"]) {
    const nlohmann::json& fabric = r["fabric"];
    const double spine = static_cast<double>(testing::count_of(fabric["spine_bytes"]));
    const double super = static_cast<double>(testing::count_of(fabric["super_spine_bytes"]));
    std::cout << fmt::format("repetition {}: spines received {:.1f} MB from the leaves, super-spines {:.1f} MB\n",
                             r.value("repetition", 0u), spine / 1e6, super / 1e6);
    // Resends cross again: the oversubscribed uplinks drop now and then.
    double resent = 0;
    for (const auto& n : r["nics"]) resent += static_cast<double>(testing::count_of(n["retransmitted_packets"]));
    EXPECT_GE(spine, 4 * kHopBytes);
    EXPECT_LE(spine, 4 * kHopBytes * kFramingAtMost + resent * kFrameBytesAtMost);
    EXPECT_GE(super, 2 * kHopBytes);
    EXPECT_LE(super, 2 * kHopBytes * kFramingAtMost + resent * kFrameBytesAtMost);
    // What the spines sent up is what the super-spines received (nothing is lost on a veth).
    double spines_up = 0;
    for (const auto& s : fabric["spines"]) spines_up += static_cast<double>(testing::count_of(s["bytes_to_above"]));
    EXPECT_NEAR(spines_up, super, 0.001 * super);
    ASSERT_EQ(fabric["super_spines"].size(), 2u);
    // The upper tier's balance is measured: the uplinks of a spine that carried traffic up (2
    // each; which spines the leaves' hashes chose varies), the downlinks into each pod (4 each).
    EXPECT_GE(r["ecmp"]["spine_uplinks"].value("links", 0u), 2u) << r["ecmp"].dump();
    EXPECT_EQ(r["ecmp"]["super_downlinks"].value("links", 0u), 8u) << r["ecmp"].dump();
  }
  // Each switch hashes with a key of its own: some spine spreads the flows a leaf hashed to it
  // over both of its uplinks (with one key for all, every spine keeps to one; with 8 QPs per hop,
  // no spine splitting in either repetition would take 1 in millions).
  bool a_spine_split = false;
  for (const auto& r : v["repetitions"]) {
    std::map<std::string, int> busy_uplinks;  // by spine
    for (const auto& l : r["fabric_links"]) {
      const std::string name = l.value("name", "");
      if (name.find("-super") == std::string::npos) continue;
      if (testing::count_of(l["lower"]["tx_bytes"]) > 1'000'000) ++busy_uplinks[name.substr(0, name.find('-'))];
    }
    for (const auto& [spine, n] : busy_uplinks) a_spine_split = a_spine_split || n == 2;
  }
  EXPECT_TRUE(a_spine_split) << "every spine kept to one uplink: the tiers hash alike";

  // The roofline: a pod's 4 spine uplinks of 0.1 Gb/s carry one hop's payload (25.2 MB), slower
  // than a host's 0.5 Gb/s link carrying its own.
  const nlohmann::json& roofline = v["roofline"];
  EXPECT_EQ(roofline.value("bottleneck", ""), "pod0 spine uplinks") << roofline.dump();
  const double roofline_s = kHopBytes * 8 / 0.4e9;
  EXPECT_NEAR(roofline.value("seconds", 0.0), roofline_s, 1e-9 * roofline_s);
  for (const auto& r : v["repetitions"]) EXPECT_GT(r.value("jct_seconds", 0.0), roofline_s);
}

}  // namespace
}  // namespace collide
