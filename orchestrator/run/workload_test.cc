#include "orchestrator/run/workload.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "orchestrator/scenario/scenario.h"
#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

namespace fs = std::filesystem;

struct TraceSummary {
  uint32_t world = 0;
  uint64_t ops = 0;
  uint64_t bytes = 0;
  uint64_t compute_ns = 0;
  uint32_t max_iteration = 0;
};

TraceSummary summarize(const std::string& path) {
  TraceSummary s;
  auto reader = traces::TraceReader::open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().to_string();
  if (!reader.ok()) return s;
  s.world = (*reader)->header().world_size();
  v1::Op op;
  for (;;) {
    auto more = (*reader)->next(op);
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) break;
    ++s.ops;
    s.bytes += op.bytes();
    s.compute_ns += op.compute_before_ns();
    s.max_iteration = std::max(s.max_iteration, op.iteration());
  }
  return s;
}

class WorkloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collide-workload-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  v1::Scenario scenario(double bytes_scale) {
    const fs::path yaml = dir_ / "s.yaml";
    std::ofstream(yaml) << "name: w\ntestbed:\n  virtual: {hosts: 4, leaves: 2, spines: 2}\n"
                           "  ranks_per_host: 2\nworkload:\n  synth: {model: llama3-70b, tp: 2, pp: 2, "
                           "dp: 2, layers: 4, sequence_length: 2048, global_batch: 4}\n"
                           "  iterations: 2\n  bytes_scale: "
                        << bytes_scale << "\nruns: {baseline: true}\n";
    auto s = load_scenario(yaml.string());
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? *s : v1::Scenario();
  }
  fs::path dir_;
};

TEST_F(WorkloadTest, SynthesizesTheJobAndScalesItToTheTestbed) {
  fs::create_directories(dir_ / "full");
  fs::create_directories(dir_ / "small");
  auto full = prepare_workload(scenario(1), 8, dir_ / "full");
  ASSERT_TRUE(full.ok()) << full.status().to_string();
  auto small = prepare_workload(scenario(0.01), 8, dir_ / "small");
  ASSERT_TRUE(small.ok()) << small.status().to_string();
  const TraceSummary f = summarize(*full), s = summarize(*small);
  EXPECT_EQ(f.world, 8u);
  EXPECT_EQ(s.world, 8u);
  EXPECT_EQ(f.max_iteration, 1u) << "two iterations";
  EXPECT_GT(f.ops, 100u);
  EXPECT_EQ(s.ops, f.ops) << "scaling keeps every op";
  EXPECT_NEAR(static_cast<double>(s.bytes) / static_cast<double>(f.bytes), 0.01, 0.001);
  // The preset has a FLOP rate, so the trace carries compute gaps, and they scale with the bytes.
  EXPECT_GT(f.compute_ns, 0u);
  EXPECT_NEAR(static_cast<double>(s.compute_ns) / static_cast<double>(f.compute_ns), 0.01, 0.001);
}

TEST_F(WorkloadTest, RefusesAJobThatDoesNotFillTheTestbed) {
  auto trace = prepare_workload(scenario(1), 16, dir_);
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("the job has 8 ranks but the testbed holds 16"), std::string::npos)
      << trace.status().message();
}

v1::Scenario incast_scenario(uint32_t senders, double bytes_scale) {
  v1::Scenario s;
  s.mutable_testbed()->set_ranks_per_host(2);
  v1::Incast& incast = *s.mutable_workload()->mutable_incast();
  incast.set_senders(senders);
  incast.set_bytes(1 << 20);
  incast.set_count(2);
  s.mutable_workload()->set_bytes_scale(bytes_scale);
  return s;
}

TEST_F(WorkloadTest, WritesAnIncastAsSendsAndGroupedReceives) {
  auto trace = prepare_workload(incast_scenario(3, 0.5), 8, dir_);
  ASSERT_TRUE(trace.ok()) << trace.status().to_string();
  auto reader = traces::TraceReader::open(*trace);
  ASSERT_TRUE(reader.ok()) << reader.status().to_string();
  EXPECT_EQ((*reader)->header().world_size(), 8u);
  EXPECT_EQ((*reader)->header().metadata().at("workload"),
            "2 x incast of 3 senders (2,3,4) to rank 0, 1048576 bytes each");
  uint64_t sends = 0, receives = 0, bytes_sent = 0;
  v1::Op op;
  for (;;) {
    auto more = (*reader)->next(op);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    if (op.kind() == v1::OP_KIND_SEND) {
      ++sends;
      bytes_sent += op.bytes();
      EXPECT_EQ(op.root(), 0);
    } else {
      EXPECT_EQ(op.kind(), v1::OP_KIND_RECV);
      EXPECT_EQ(op.rank(), 0u);
      EXPECT_NE(op.group(), 0u);
      ++receives;
    }
  }
  EXPECT_EQ(sends, 3u * 2);
  EXPECT_EQ(receives, 3u * 2);
  EXPECT_EQ(bytes_sent, 3u * 2 * (1 << 19)) << "scaled by bytes_scale";
}

TEST_F(WorkloadTest, RefusesAnIncastWithMoreSendersThanTheJobHasRanks) {
  auto trace = prepare_workload(incast_scenario(8, 1), 8, dir_);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(),
            "workload.incast.senders: 8 senders and a receiver need 9 ranks, but the job has 8");
}

}  // namespace
}  // namespace collide::orchestrator
