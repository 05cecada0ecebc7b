// Dual planes through `collide run` (configs/fabric/dual-plane.yaml): 4 hosts with 2 NICs, NIC r
// of every host on plane r (its own leaves and spine, no link between the planes). A ring
// all-reduce over all 8 ranks completes, PXN keeping each rail's traffic on its plane, and the
// switches' counters show each plane's spine carrying its rail's bytes. Needs root (namespaces,
// BPF, AF_XDP).
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
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
    std::filesystem::path(COLLIDE_CONFIGS_DIR) / "fabric" / "dual-plane.yaml";

class DualPlaneRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("dp", "collide-dualplane");
  }
  void TearDown() override { run_dir_.reset(); }

  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(DualPlaneRunTest, EachRailsTrafficStaysOnItsOwnPlane) {
  const nlohmann::json report = testing::run_shipped_scenario(COLLIDE_BIN, kScenario, "planes", *run_dir_);
  ASSERT_TRUE(report.is_object());
  const nlohmann::json& v = testing::report_variant(report, "baseline");
  EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
  ASSERT_EQ(v["repetitions"].size(), 1u);
  const nlohmann::json& r = v["repetitions"][0];
  // The cabling: rail 0's leaves (0, 2) to spine 0 only, rail 1's (1, 3) to spine 1 only.
  std::set<std::string> fabric_links;
  for (const auto& l : r["fabric_links"]) {
    const std::string name = l.value("name", "");
    if (name.rfind("leaf", 0) == 0) fabric_links.insert(name);
  }
  EXPECT_EQ(fabric_links, (std::set<std::string>{"leaf0-spine0", "leaf2-spine0", "leaf1-spine1", "leaf3-spine1"}));
  // Each plane carried its rail: the rail groups' hosts exchange over both spines alike.
  const nlohmann::json& spines = r["fabric"]["spines"];
  ASSERT_EQ(spines.size(), 2u);
  const double plane0 = static_cast<double>(testing::count_of(spines[0]["bytes_from_below"]));
  const double plane1 = static_cast<double>(testing::count_of(spines[1]["bytes_from_below"]));
  std::cout << fmt::format("spine0 (plane 0) received {:.1f} MB, spine1 (plane 1) {:.1f} MB\n", plane0 / 1e6,
                           plane1 / 1e6);
  EXPECT_GT(plane0, 4e6);
  EXPECT_GT(plane1, 4e6);
  EXPECT_NEAR(plane0 / plane1, 1.0, 0.25);
}

}  // namespace
}  // namespace collide
