// `workload.incast`: three senders on three hosts send to a receiver on a fourth at once, through
// one leaf, with the out-of-order transport mode; the run completes and the receiver's NIC took
// every byte, each once. Needs root (namespaces, BPF, AF_XDP).
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/parse_number.h"
#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

constexpr uint32_t kSenders = 3;
constexpr uint32_t kCount = 2;
constexpr uint64_t kBytes = 1 << 20;

// A count of protobuf's JSON: 64-bit numbers are quoted, and absent when 0.
uint64_t count_of(const nlohmann::json& j, const char* field) {
  if (!j.contains(field)) return 0;
  auto n = parse_number<uint64_t>(j[field].get<std::string>(), field);
  EXPECT_TRUE(n.ok()) << n.status().to_string();
  return n.ok() ? *n : 0;
}

TEST(IncastRunTest, EverySenderDeliversEveryByteToTheReceiver) {
  COLLIDE_REQUIRE(testing::missing_for_collide_run());
  testing::CollideRunDir run_dir("ic", "collide-incast");
  const auto scenario = run_dir.dir() / "incast.yaml";
  std::ofstream(scenario) << fmt::format(R"(name: incast
testbed:
  virtual: {{name: {}, hosts: {}, nics_per_host: 1, leaves: 1, spines: 1}}
  ranks_per_host: 1
workload:
  incast: {{senders: {}, bytes: {}, count: {}}}
transport:
  recovery: out-of-order
  timeout_exponent: 16
runs:
  baseline: true
)",
                                         run_dir.bed(), kSenders + 1, kSenders, kBytes, kCount);
  const auto out = run_dir.dir() / "results";
  auto run = process::run_command({COLLIDE_BIN, "run", scenario.string(), "--output", out.string()});
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->exit_code, 0) << run->output;
  const auto at = run->output.find("Out-of-order rate");
  EXPECT_NE(at, std::string::npos) << run->output;
  if (at != std::string::npos) std::cout << run->output.substr(at);

  // Host 0 holds the receiver (rank 0); hosts 1..3 one sender each.
  for (uint32_t h = 0; h <= kSenders; ++h) {
    std::ifstream in(out / "work" / fmt::format("agent-{}", h) / fmt::format("run-0-host-{}.completion.json", h));
    const auto j = nlohmann::json::parse(in, nullptr, false);
    ASSERT_TRUE(j.is_object()) << "host " << h << " left no record";
    EXPECT_TRUE(j.value("ok", false)) << j.dump();
    uint64_t ops = 0;
    for (const auto& op : j["ops"]) {
      ++ops;
      EXPECT_FALSE(op.value("failed", false)) << op.dump();
      EXPECT_EQ(op.value("kind", std::string()), h == 0 ? "recv" : "send") << op.dump();
      EXPECT_EQ(count_of(op, "bytes"), kBytes);
    }
    EXPECT_EQ(ops, h == 0 ? kSenders * kCount : kCount) << "host " << h;
    const nlohmann::json& counters = j["counters"];
    EXPECT_EQ(count_of(counters, "pattern_errors") + count_of(counters, "icrc_errors"), 0u);
    // Every byte once, none twice; the senders receive only acknowledgements.
    EXPECT_EQ(count_of(counters, "payload_bytes_received"), h == 0 ? kSenders * kCount * kBytes : 0u)
        << "host " << h;
  }

  std::ifstream report(out / "report.json");
  const auto r = nlohmann::json::parse(report, nullptr, false);
  ASSERT_TRUE(r.is_object()) << "no report.json";
  EXPECT_EQ(r["variants"][0].value("failed_runs", 0), 0);
  EXPECT_GE(count_of(r["variants"][0], "packets_received"), kSenders * kCount * kBytes / 1024);
  EXPECT_FALSE(run_dir.namespaces_left());
}

}  // namespace
}  // namespace collide
