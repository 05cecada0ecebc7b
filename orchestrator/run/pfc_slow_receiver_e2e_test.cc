// A slow receiver on a lossy and on a lossless virtual fabric (configs/fabric/pfc-slow-receiver.yaml,
// one repetition): lossy, no PFC frame is sent anywhere; lossless, nothing is lost, the stalled host
// pauses its leaf port, the leaf pauses the spine port that feeds it (pauses spread into the
// fabric). Needs root (namespaces, BPF, AF_XDP).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

namespace fs = std::filesystem;

const nlohmann::json& named(const nlohmann::json& list, const std::string& key, const std::string& value) {
  static const nlohmann::json kNone;
  for (const auto& item : list) {
    if (item[key] == value) return item;
  }
  return kNone;
}

uint64_t number(const nlohmann::json& field) {
  return field.is_string() ? std::stoull(field.get<std::string>()) : field.get<uint64_t>();
}

const nlohmann::json& port(const nlohmann::json& variant, const std::string& link, const std::string& end) {
  static const nlohmann::json kNone;
  for (const auto& p : variant["ports"]) {
    if (p["link"] == link && p["end"] == end) return p;
  }
  return kNone;
}

class PfcSlowReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    dir_.emplace("pf", "collide-pfc-slow");
  }
  void TearDown() override { dir_.reset(); }
  std::optional<testing::CollideRunDir> dir_;
};

TEST_F(PfcSlowReceiverTest, LossyNeverPausesAndLosslessLosesNothingWhileItsPausesSpread) {
  YAML::Node s = YAML::LoadFile(std::string(COLLIDE_CONFIGS_DIR) + "/fabric/pfc-slow-receiver.yaml");
  s["testbed"]["virtual"]["name"] = dir_->bed();
  s["runs"]["repetitions"] = 1;
  const fs::path scenario = dir_->dir() / "pfc-slow-receiver.yaml";
  std::ofstream(scenario) << YAML::Dump(s) << "\n";

  const auto started = std::chrono::steady_clock::now();
  auto r = process::run_command({COLLIDE_BIN, "run", scenario.string(), "--output", (dir_->dir() / "out").string()});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const std::string& log = r->output;
  std::cout << fmt::format("collide run: exit {} after {:.1f} s\n", r->exit_code, seconds)
            << log.substr(std::min(log.size(), log.find("Jobs:")));
  ASSERT_EQ(r->exit_code, 0) << log;
  std::ifstream in(dir_->dir() / "out" / "report.json");
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object()) << log;
  for (const auto& v : report["variants"]) EXPECT_EQ(v["failed_runs"], 0) << v["name"];

  const nlohmann::json& lossy = named(report["variants"], "name", "lossy-slow");
  const nlohmann::json& lossless = named(report["variants"], "name", "lossless-slow");
  ASSERT_TRUE(lossy.is_object() && lossless.is_object()) << report.dump(1);

  // Lossy: no flow control anywhere.
  for (const auto& p : lossy["repetitions"][0]["ports"]) {
    EXPECT_EQ(number(p["paused_ns"]) + number(p["pause_frames_sent"]), 0u) << p.dump();
  }
  for (const auto& nic : lossy["repetitions"][0]["nics"]) EXPECT_EQ(number(nic["pause_frames_sent"]), 0u);

  // Lossless: nothing lost. No switch port drops, and every packet resent (a timer that fired
  // during the stall) had arrived before: the receivers count each one as a duplicate.
  for (const auto& p : lossless["repetitions"][0]["ports"]) EXPECT_EQ(number(p["drops"]), 0u) << p.dump();
  uint64_t resent = 0, duplicates = 0, host_pauses_sent = 0;
  for (const auto& nic : lossless["repetitions"][0]["nics"]) {
    resent += number(nic["retransmitted_packets"]);
    duplicates += number(nic["duplicates_received"]);
    if (nic["host"] == 0) host_pauses_sent = number(nic["pause_frames_sent"]);
  }
  EXPECT_EQ(resent, duplicates) << lossless["repetitions"][0]["nics"].dump(1);
  EXPECT_GT(host_pauses_sent, 0u) << "the slow host pauses its leaf port";
  // The pauses spread: h0's leaf port is held, leaf0 pauses the spine through its uplink, and the
  // spine's port towards leaf0 is held.
  const nlohmann::json& leaf_port = port(lossless, "h0.nic0-leaf0", "leaf0");
  const nlohmann::json& spine_port = port(lossless, "leaf0-spine0", "spine0");
  ASSERT_TRUE(leaf_port.is_object() && spine_port.is_object()) << lossless["ports"].dump(1);
  EXPECT_GT(number(leaf_port["pause_frames"]), 0u) << leaf_port.dump();
  EXPECT_GT(number(leaf_port["paused_ns"]), 50'000'000u) << leaf_port.dump();
  EXPECT_GT(number(port(lossless, "leaf0-spine0", "leaf0")["pause_frames_sent"]), 0u) << lossless["ports"].dump(1);
  EXPECT_GT(number(spine_port["paused_ns"]), 0u) << spine_port.dump();
  EXPECT_FALSE(dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
