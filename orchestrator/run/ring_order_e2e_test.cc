// Ring order against the fabric through `collide run` (configs/fabric/ring-order.yaml): a ring
// all-reduce over 4 hosts on 2 leaves (host h under leaf h % 2), its hosts in rank order and in
// topology-aware order. The spines' own port counters say how many bytes crossed between the
// leaves: in rank order all 4 of the ring's host boundaries are leaf boundaries, in topology
// order 2 are, so the spines carry half. Needs root (namespaces, BPF, AF_XDP).
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
    std::filesystem::path(COLLIDE_CONFIGS_DIR) / "fabric" / "ring-order.yaml";

// The payload a run puts through the spines: 2 all-reduces of 8 MiB, each hop of the ring
// carrying 2 (n-1)/n of it (n = 8 ranks), over every leaf boundary of the ring. Frames add their
// headers (about 7% at 1 KiB) and the ACKs going back; a little ARP comes on top.
constexpr double kHopBytes = 2 * 8.0 * (1 << 20) * 2 * 7 / 8;
constexpr double kFramingAtMost = 1.15;

class RingOrderRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("ro", "collide-ringorder");
  }
  void TearDown() override { run_dir_.reset(); }

  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(RingOrderRunTest, TopologyOrderCrossesTheSpinesHalfAsMuchAsRankOrder) {
  const nlohmann::json report =
      testing::run_shipped_scenario(COLLIDE_BIN, kScenario, "ringod", *run_dir_);
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 2u);
  for (const auto& v : report["variants"]) {
    EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
    ASSERT_EQ(v["repetitions"].size(), 2u);
  }
  const auto spine_bytes = [](const nlohmann::json& repetition) {
    return static_cast<double>(testing::count_of(repetition["fabric"]["spine_bytes"]));
  };
  const auto& rank = testing::report_variant(report, "rank-order");
  const auto& topology = testing::report_variant(report, "topology-order");
  for (size_t i = 0; i < 2; ++i) {
    const double by_rank = spine_bytes(rank["repetitions"][i]);
    const double by_topology = spine_bytes(topology["repetitions"][i]);
    std::cout << fmt::format("repetition {}: spines carried {:.1f} MB in rank order, {:.1f} MB in "
                             "topology order ({:.3f}x)\n",
                             i, by_rank / 1e6, by_topology / 1e6, by_topology / by_rank);
    // Measured, not computed: each order's spine bytes lie between its crossings' payload and
    // that payload with framing.
    EXPECT_GE(by_rank, 4 * kHopBytes);
    EXPECT_LE(by_rank, 4 * kHopBytes * kFramingAtMost);
    EXPECT_GE(by_topology, 2 * kHopBytes);
    EXPECT_LE(by_topology, 2 * kHopBytes * kFramingAtMost);
  }
}

}  // namespace
}  // namespace collide
