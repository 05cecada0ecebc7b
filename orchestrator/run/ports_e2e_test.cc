// Switch ports that congest, through `collide run`: four hosts under one leaf exchange an
// all-to-all, so each leaf port towards a host carries three hosts' traffic into a slow, shallow
// queue. The ports' telemetry must count what the queue did (drops at the buffer's end; CE marks
// where the port marks) and agree with the kernel's interface counters of the same ports: what the leaf
// received from its hosts is what its queues sent plus what they dropped. Needs root (namespaces,
// BPF, AF_XDP).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"
#include "tests/support/report_count.h"

namespace collide {
namespace {

constexpr int kHosts = 4;
constexpr uint64_t kBufferBytes = 16 * 1024;
constexpr uint64_t kEthernetHeader = 14;
constexpr uint64_t kFrameBytes = 1024 + 100;  // payload plus every header of a RoCEv2 frame

using testing::count_of;

class PortsRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("pq", "collide-ports");
    out_ = run_dir_->dir();
  }
  void TearDown() override { run_dir_.reset(); }

  // Runs an all-to-all over the hosts with `leaf_down` as the leaf's host ports' profile.
  nlohmann::json run(const std::string& leaf_down, bool dcqcn) {
    const auto path = out_ / "scenario.yaml";
    std::ofstream(path) << fmt::format(R"(name: ports-e2e
testbed:
  virtual: {{name: {}, hosts: {}, leaves: 1, spines: 0, leaf_down: {}}}
  ranks_per_host: 1
workload:
  collectives: {{kind: all-to-all, bytes: 4MiB, count: 1}}
# Selective repeat and 268 ms timeouts: at a 16 KiB buffer most frames drop, and go-back-N's
# resend storms then exhausted its retries now and then; these tests are about the counters.
transport: {{mtu_bytes: 1024, channels: 2, qps_per_connection: 1, dcqcn: {}, recovery: selective-repeat,
            timeout_exponent: 16}}
runs:
  baseline: true
)",
                                       run_dir_->bed(), kHosts, leaf_down, dcqcn ? "true" : "false");
    auto run = process::run_command({COLLIDE_BIN, "run", path.string(), "--output", (out_ / "results").string()});
    EXPECT_TRUE(run.ok());
    if (!run.ok()) return {};
    EXPECT_EQ(run->exit_code, 0) << run->output;
    EXPECT_NE(run->output.find("Switch port queues"), std::string::npos) << run->output;
    std::ifstream in(out_ / "results" / "report.json");
    auto report = nlohmann::json::parse(in, nullptr, false);
    EXPECT_TRUE(report.is_object()) << run->output;
    const auto at = run->output.find("Switch port queues");
    std::cout << (at == std::string::npos ? run->output : run->output.substr(at));
    return report;
  }

  std::optional<testing::CollideRunDir> run_dir_;
  std::filesystem::path out_;
};

// The leaf's host ports of one repetition by link name, and the tier's totals.
std::map<std::string, nlohmann::json> leaf_down_ports(const nlohmann::json& rep) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& p : rep["ports"]) {
    if (p.value("tier", "") == "leaf_down") out[p.value("link", "")] = p;
  }
  return out;
}

// What the queues counted agrees with the interface counters of the same ports: every frame the
// leaf received from its hosts left through a queue or was dropped there, and each port sent what
// its queue says it sent.
void expect_counters_agree(const nlohmann::json& rep) {
  const auto ports = leaf_down_ports(rep);
  ASSERT_EQ(ports.size(), static_cast<size_t>(kHosts)) << rep["ports"].dump();
  uint64_t received = 0, queued_out = 0, dropped = 0, queue_bytes = 0;
  for (const auto& l : rep["fabric_links"]) {
    const std::string name = l.value("name", "");
    ASSERT_EQ(ports.count(name), 1u) << name;
    const auto& port = ports.at(name);
    received += count_of(l["upper"]["rx_packets"]);
    EXPECT_EQ(count_of(l["upper"]["tx_packets"]), count_of(port["packets"])) << name;
    // A qdisc counts a frame with its Ethernet header (as the engines do), a veth's transmit
    // counter without it (measured: 14 bytes a frame apart).
    EXPECT_EQ(count_of(l["upper"]["tx_bytes"]) + kEthernetHeader * count_of(port["packets"]),
              count_of(port["bytes"]))
        << name;
    queued_out += count_of(port["packets"]);
    queue_bytes += count_of(port["bytes"]);
    dropped += count_of(port["drops"]);
  }
  EXPECT_EQ(received, queued_out + dropped);
  // The bytes the hosts' engines sent reached the leaf; what is missing from the queues' output
  // is at most the dropped frames.
  uint64_t sent = 0;
  for (const auto& n : rep["nics"]) sent += count_of(n["tx_bytes"]);
  EXPECT_GE(sent, queue_bytes);
  EXPECT_LE(sent - queue_bytes, dropped * kFrameBytes) << sent << " sent, " << queue_bytes << " queued out";
}

TEST_F(PortsRunTest, ShallowTailDropPortDropsAndTheCountersAgree) {
  const nlohmann::json report =
      run(fmt::format("{{gbps: 0.1, buffer_bytes: {}}}", kBufferBytes), /*dcqcn=*/false);
  ASSERT_TRUE(report.is_object());
  const auto& v = report["variants"][0];
  EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
  const auto& rep = v["repetitions"][0];
  uint64_t drops = 0, marks = 0;
  for (const auto& [name, p] : leaf_down_ports(rep)) {
    drops += count_of(p["drops"]);
    marks += count_of(p["ecn_marks"]);
    EXPECT_GT(count_of(p["samples"]), 5u) << name;
    EXPECT_GT(count_of(p["depth_max_bytes"]), 0u) << name;
    EXPECT_LE(count_of(p["depth_max_bytes"]), kBufferBytes + kFrameBytes) << name;
    EXPECT_EQ(p["utilization"].size(), 32u) << name;
    double busiest = 0;
    for (const auto& u : p["utilization"]) busiest = std::max(busiest, u.get<double>());
    EXPECT_GT(busiest, 0.3) << name << ": " << p["utilization"].dump();
    EXPECT_LE(busiest, 1.2) << name << ": " << p["utilization"].dump();
  }
  EXPECT_GT(drops, 0u) << rep["ports"].dump();
  EXPECT_EQ(marks, 0u);
  expect_counters_agree(rep);
  // The variant and tier totals carry the same drops.
  for (const auto& t : v["port_tiers"]) {
    if (t.value("tier", "") == "leaf_down") {
      EXPECT_EQ(count_of(t["drops"]), drops);
      EXPECT_GT(t["drops_ppm"].get<double>(), 0.0);
    }
  }
  EXPECT_FALSE(run_dir_->namespaces_left());
}

TEST_F(PortsRunTest, EcnProfileMarksTheReplaysFrames) {
  const nlohmann::json report = run(
      "{gbps: 0.1, buffer_bytes: 256KiB, ecn: {kmin_bytes: 8KiB, kmax_bytes: 64KiB, pmax: 1}}", /*dcqcn=*/true);
  ASSERT_TRUE(report.is_object());
  const auto& v = report["variants"][0];
  EXPECT_EQ(v.value("failed_runs", 1u), 0u) << v["failures"].dump();
  const auto& rep = v["repetitions"][0];
  uint64_t marks = 0;
  for (const auto& [name, p] : leaf_down_ports(rep)) marks += count_of(p["ecn_marks"]);
  EXPECT_GT(marks, 0u) << rep["ports"].dump();
  expect_counters_agree(rep);
  for (const auto& t : v["port_tiers"]) {
    if (t.value("tier", "") == "leaf_down") {
      EXPECT_EQ(count_of(t["ecn_marks"]), marks);
    }
  }
}

}  // namespace
}  // namespace collide
