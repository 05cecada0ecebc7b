// Rails through `collide run`: a virtual testbed of 4 hosts x 4 NICs (NIC r of every host on leaf
// r, 2 spines), 4 ranks per host (local rank i on NIC i, one engine per NIC), every frame's ICRC
// verified by its receiver. The fabric's own link counters prove where the traffic went: each
// rail's leaf carries exactly what that rail's NICs sent, the spines only what crossed rails, and
// a loss fault on one NIC's cable touches only that rail (every frame accounted for: delivered,
// dropped by the fault, or dropped by a host's full receive ring). Needs root (namespaces, BPF,
// AF_XDP).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collide/scenario.pb.h"
#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"
#include "tests/support/report_count.h"

namespace collide {
namespace {

constexpr int kHosts = 4;
constexpr int kNics = 4;

// What a spine may count in a run that sends nothing across rails: the namespaces have IPv6 off
// and permanent neighbours towards the hosts, so only an ARP exchange between a leaf and a spine
// (42-byte frames, a few per link per run) can be there. Measured: 0 bytes in every such run.
constexpr uint64_t kSpineNoiseBytes = 16 * 1024;

// The demo's Llama 3 70B slice (configs/demo.yaml) laid out for 4-rank hosts: tensor parallelism
// inside each host, pipeline and data parallelism between ranks of one local index, so every
// inter-host transfer is between NICs of one rail.
constexpr const char* kDemoWorkload = R"(  synth:
    model: llama3-70b
    tp: 4
    pp: 2
    dp: 2
    layers: 4
    sequence_length: 2048
    global_batch: 4
    bucket_bytes: 256MiB
  iterations: 2
  bytes_scale: 0.01
  timing: fast)";

// One all-reduce over all 16 ranks on 2 ring channels: channel 0 enters each host on NIC 0 and
// leaves it from NIC 3, channel 1 enters on NIC 1 and leaves from NIC 0, so without PXN the rings
// cross rails at every host boundary.
constexpr const char* kCrossRailWorkload = R"(  collectives: {kind: all-reduce, bytes: 8MiB, count: 2})";

// NCCL's PXN is on by default; the runs that show traffic without it switch it off.
constexpr const char* kPxnOff = "pxn_disable: true";
constexpr const char* kPxnOn = "pxn_disable: false";

using testing::count_of;

class RailsRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("rl", "collide-rails");
    bed_ = run_dir_->bed();
    out_ = run_dir_->dir();
  }
  void TearDown() override { run_dir_.reset(); }

  // Runs the scenario and returns its report.json; `faults` and `variants` are YAML list items.
  nlohmann::json run(const std::string& workload, const std::string& transport,
                     const std::string& faults = "", const std::string& variants = "") {
    const auto path = out_ / "scenario.yaml";
    std::ofstream(path) << fmt::format(R"(name: rails-e2e
testbed:
  virtual: {{name: {}, hosts: {}, nics_per_host: {}, leaves: {}, spines: 2}}
  ranks_per_host: {}
workload:
{}
transport: {{mtu_bytes: 1024, channels: 2, qps_per_connection: 1, timeout_exponent: 16{}}}
faults: [{}]
runs:
  baseline: true
  variants: [{}]
)",
                                       bed_, kHosts, kNics, kNics, kNics, workload,
                                       transport.empty() ? "" : ", " + transport, faults, variants);
    const auto started = std::chrono::steady_clock::now();
    auto run = process::run_command({COLLIDE_BIN, "run", path.string(), "--output", (out_ / "results").string()});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_TRUE(run.ok());
    if (!run.ok()) return {};
    EXPECT_EQ(run->exit_code, 0) << run->output;
    std::ifstream in(out_ / "results" / "report.json");
    EXPECT_TRUE(in.good()) << run->output;
    auto report = nlohmann::json::parse(in, nullptr, false);
    EXPECT_TRUE(report.is_object()) << run->output;
    // The numbers this test is about, for whoever reads its log.
    const auto at = run->output.find("Fabric:");
    std::cout << fmt::format("collide run took {:.1f} s\n", seconds)
              << (at == std::string::npos ? run->output : run->output.substr(at));
    return report;
  }

  bool namespaces_left() const { return run_dir_->namespaces_left(); }

  std::optional<testing::CollideRunDir> run_dir_;
  std::string bed_;
  std::filesystem::path out_;
};

// Every run of the report completed (every frame's payload and ICRC checked by its receiver).
void expect_all_completed(const nlohmann::json& report) {
  for (const auto& v : report["variants"]) {
    EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
    EXPECT_GT(count_of(v["collective_time_us"]["count"]), 0u) << v.dump();
  }
}

// The bytes each rail's NICs sent over a repetition, as their engines counted them.
std::vector<uint64_t> sent_by_rail(const nlohmann::json& repetition) {
  std::vector<uint64_t> bytes(kNics, 0);
  for (const auto& n : repetition["nics"]) bytes.at(n.value("nic", 0u)) += count_of(n["tx_bytes"]);
  return bytes;
}

// One rail over a repetition: frames its leaf took in from and handed out to the rail's hosts,
// the frames the leaf's host ports dropped because a host's receive ring was full, and what the
// rail's NICs counted.
struct RailFrames {
  uint64_t in = 0, out = 0, host_ring_drops = 0;
  uint64_t first_transmissions = 0, retransmitted = 0, naks = 0, duplicates = 0;
};

std::vector<RailFrames> rail_frames(const nlohmann::json& repetition) {
  std::vector<RailFrames> rails(kNics);
  for (const auto& l : repetition["fabric_links"]) {
    const std::string name = l.value("name", "");
    if (name.rfind("h", 0) != 0) continue;  // host links only: "h1.nic2-leaf2"
    RailFrames& r = rails.at(static_cast<size_t>(name[name.find(".nic") + 4] - '0'));
    r.in += count_of(l["upper"]["rx_packets"]);
    r.out += count_of(l["upper"]["tx_packets"]);
    r.host_ring_drops += count_of(l["upper"]["tx_dropped"]);
  }
  for (const auto& n : repetition["nics"]) {
    RailFrames& r = rails.at(n.value("nic", 0u));
    r.first_transmissions += count_of(n["packets_sent"]) - count_of(n["retransmitted_packets"]);
    r.retransmitted += count_of(n["retransmitted_packets"]);
    r.naks += count_of(n["naks_received"]);
    r.duplicates += count_of(n["duplicates_received"]);
  }
  return rails;
}

// With PXN on, as NCCL runs by default.
TEST_F(RailsRunTest, DemoWorkloadStaysOnEachRanksRail) {
  const nlohmann::json report = run(kDemoWorkload, "");
  ASSERT_TRUE(report.is_object());
  expect_all_completed(report);
  const auto& rep = report["variants"][0]["repetitions"][0];
  ASSERT_EQ(rep["nics"].size(), static_cast<size_t>(kHosts * kNics)) << rep["nics"].dump();
  const auto& leaves = rep["fabric"]["leaves"];
  ASSERT_EQ(leaves.size(), static_cast<size_t>(kNics)) << rep["fabric"].dump();
  const std::vector<uint64_t> sent = sent_by_rail(rep);
  for (int r = 0; r < kNics; ++r) {
    const auto& leaf = leaves[r];
    EXPECT_EQ(leaf.value("name", ""), fmt::format("leaf{}", r));
    EXPECT_EQ(leaf.value("rail", 99u), static_cast<uint32_t>(r));
    // Leaf r's host ports received exactly what the NIC r engines of all hosts sent, and nothing
    // went up: all of rail r's traffic turned around under its own leaf.
    EXPECT_GT(sent[r], 0u) << "rail " << r << " sent nothing";
    EXPECT_EQ(count_of(leaf["bytes_from_below"]), sent[r]) << "rail " << r;
    EXPECT_LE(count_of(leaf["bytes_to_above"]), kSpineNoiseBytes) << "rail " << r;
  }
  EXPECT_LE(count_of(rep["fabric"]["spine_bytes"]), kSpineNoiseBytes) << rep["fabric"].dump();
  // Every host link is named by its NIC and its rail's leaf.
  int host_links = 0;
  for (const auto& l : rep["fabric_links"]) {
    const std::string name = l.value("name", "");
    if (name.rfind("h", 0) != 0) continue;
    ++host_links;
    const char nic = name[name.find(".nic") + 4];
    EXPECT_EQ(name.substr(name.find('-')), std::string("-leaf") + nic) << name;
  }
  EXPECT_EQ(host_links, kHosts * kNics);
  EXPECT_FALSE(namespaces_left());
}

TEST_F(RailsRunTest, CrossRailRingCrossesTheSpinesWithoutPxn) {
  const nlohmann::json report = run(kCrossRailWorkload, kPxnOff);
  ASSERT_TRUE(report.is_object());
  expect_all_completed(report);
  const auto& rep = report["variants"][0]["repetitions"][0];
  // Channel 0's hops NIC 3 -> next host's NIC 0 climb from leaf 3 over a spine down to leaf 0.
  const uint64_t spine = count_of(rep["fabric"]["spine_bytes"]);
  EXPECT_GT(spine, 1'000'000u) << rep["fabric"].dump();
  const auto& leaves = rep["fabric"]["leaves"];
  ASSERT_EQ(leaves.size(), static_cast<size_t>(kNics));
  EXPECT_GT(count_of(leaves[3]["bytes_to_above"]), 1'000'000u);
  EXPECT_GT(count_of(leaves[0]["bytes_from_above"]), 1'000'000u);
  // What went up came down: the spines' ports count both.
  uint64_t up = 0, down = 0;
  for (const auto& l : leaves) {
    up += count_of(l["bytes_to_above"]);
    down += count_of(l["bytes_from_above"]);
  }
  EXPECT_EQ(up, spine);
  EXPECT_EQ(down, spine);
}

// With PXN the cross-rail hop moves over the modeled NVLink to the local rank on the peer's rail
// first, so no byte of the ring needs a spine.
TEST_F(RailsRunTest, CrossRailRingStaysOnRailsWithPxn) {
  const nlohmann::json report = run(kCrossRailWorkload, kPxnOn);
  ASSERT_TRUE(report.is_object());
  expect_all_completed(report);
  const auto& rep = report["variants"][0]["repetitions"][0];
  EXPECT_LE(count_of(rep["fabric"]["spine_bytes"]), kSpineNoiseBytes) << rep["fabric"].dump();
  const auto& leaves = rep["fabric"]["leaves"];
  ASSERT_EQ(leaves.size(), static_cast<size_t>(kNics));
  // The hops between hosts now leave from the rail of the receiving first rank: NIC 0 for
  // channel 0, NIC 1 for channel 1.
  EXPECT_GT(count_of(leaves[0]["bytes_from_below"]), 1'000'000u);
  EXPECT_GT(count_of(leaves[1]["bytes_from_below"]), 1'000'000u);
  const std::vector<uint64_t> sent = sent_by_rail(rep);
  for (int r = 0; r < kNics; ++r) EXPECT_EQ(count_of(leaves[r]["bytes_from_below"]), sent[r]) << "rail " << r;
}

TEST_F(RailsRunTest, LossOnOneNicsCableTouchesOnlyItsRail) {
  const nlohmann::json report =
      run(kDemoWorkload, "",
          "{name: lossy-h1-nic2, kind: loss, link: h1.nic2, direction: both, probability: 1%, seed: 7, "
          "roce_only: true}",
          "{name: loss, faults: [lossy-h1-nic2]}");
  ASSERT_TRUE(report.is_object());
  expect_all_completed(report);
  ASSERT_EQ(report["variants"].size(), 2u);
  const auto& base = report["variants"][0]["repetitions"][0];
  const auto& lossy = report["variants"][1]["repetitions"][0];

  // Ground truth: the fault saw and dropped frames, and what it saw is what h1's NIC 2 cable
  // carried (its leaf port's frames both ways, plus those it dropped on their way out).
  const auto& fault = report["variants"][1]["faults"][0];
  const uint64_t matched = count_of(fault["packets_matched"]), acted = count_of(fault["packets_acted"]);
  EXPECT_GT(acted, 0u) << fault.dump();
  uint64_t cable = 0;
  for (const auto& l : lossy["fabric_links"]) {
    if (l.value("name", "") != "h1.nic2-leaf2") continue;
    cable = count_of(l["upper"]["rx_packets"]) + count_of(l["upper"]["tx_packets"]);
  }
  EXPECT_GT(cable, 0u);
  EXPECT_GE(matched, cable);
  EXPECT_LE(matched, cable + acted);

  // Frames are conserved on every rail's leaf: what came in from its hosts went out to them,
  // except what the fault dropped (rail 2 of the lossy run) and what a host's receive ring had no
  // room for (the leaf port's tx_dropped: on 2 cores, 16 NIC engines and the kernel's softirqs
  // sometimes fall behind). So the fabric lost nothing anywhere else.
  const std::vector<RailFrames> base_rails = rail_frames(base), lossy_rails = rail_frames(lossy);
  for (int r = 0; r < kNics; ++r) {
    const RailFrames& b = base_rails[r];
    const RailFrames& l = lossy_rails[r];
    EXPECT_EQ(b.in, b.out + b.host_ring_drops) << "rail " << r << " lost frames in the baseline";
    EXPECT_EQ(l.in, l.out + l.host_ring_drops + (r == 2 ? acted : 0u)) << "rail " << r;
  }

  // Retransmissions: the fault's rail resends, h1's NIC 2 and its rail-2 peers. Anywhere else a
  // resend must have a host-side cause: a frame its receiver's ring dropped (then a NAK or a
  // timeout), or a timer that fired before the ACK was read (the receiver counts a duplicate).
  for (const auto* rep : {&base, &lossy}) {
    const std::vector<RailFrames>& rails = rep == &base ? base_rails : lossy_rails;
    for (int r = 0; r < kNics; ++r) {
      if (rep == &lossy && r == 2) continue;
      const RailFrames& f = rails[r];
      if (f.retransmitted > 0) {
        EXPECT_GT(f.host_ring_drops + f.duplicates, 0u)
            << (rep == &base ? "baseline" : "lossy") << " rail " << r << " resent " << f.retransmitted
            << " packets with no host-side cause";
      }
      if (f.naks > 0) {
        EXPECT_GT(f.host_ring_drops, 0u) << "rail " << r << ": NAKs without a lost frame";
      }
    }
  }
  uint64_t h1_nic2 = 0, peers_nic2 = 0;
  for (const auto& n : lossy["nics"]) {
    if (n.value("nic", 0u) != 2) continue;
    (n.value("host", 0u) == 1 ? h1_nic2 : peers_nic2) += count_of(n["retransmitted_packets"]);
  }
  EXPECT_GT(h1_nic2, 0u);
  EXPECT_GT(peers_nic2, 0u);
  EXPECT_GT(lossy_rails[2].naks, 0u);

  // The workload is the same in both runs: every rail sent the same first transmissions, and each
  // leaf's host ports received exactly what that rail's NICs sent, resends included.
  const std::vector<uint64_t> lossy_sent = sent_by_rail(lossy);
  for (int r = 0; r < kNics; ++r) {
    EXPECT_EQ(lossy_rails[r].first_transmissions, base_rails[r].first_transmissions) << "rail " << r;
    EXPECT_EQ(count_of(lossy["fabric"]["leaves"][r]["bytes_from_below"]), lossy_sent[r]) << "rail " << r;
  }
  EXPECT_LE(count_of(lossy["fabric"]["spine_bytes"]), kSpineNoiseBytes);
  EXPECT_FALSE(namespaces_left());
}

}  // namespace
}  // namespace collide
