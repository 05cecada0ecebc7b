#include "orchestrator/run/workload.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "orchestrator/scenario/scenario.h"
#include "tests/support/status_matchers.h"
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

// Every op of a trace by rank: its communicator, and the header's communicators by id.
struct RankOps {
  std::map<uint32_t, std::vector<std::string>> comms;  // rank -> each op's comm, in order
  std::map<std::string, std::vector<uint32_t>> members;
  uint32_t world = 0;
};

RankOps rank_ops(const std::string& path) {
  RankOps out;
  auto reader = traces::TraceReader::open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().to_string();
  if (!reader.ok()) return out;
  out.world = (*reader)->header().world_size();
  for (const v1::Communicator& c : (*reader)->header().communicators()) {
    out.members[c.id()] = {c.ranks().begin(), c.ranks().end()};
  }
  v1::Op op;
  for (auto more = (*reader)->next(op); more.ok() && *more; more = (*reader)->next(op)) {
    out.comms[op.rank()].push_back(op.comm());
  }
  return out;
}

// Two jobs on alternate hosts: one trace of the whole testbed in which each job's ops run on its
// own hosts' ranks in communicators of its own, and with runs.alone each job by itself.
TEST_F(WorkloadTest, SeveralJobsBecomeOneTraceEachOnItsOwnRanksAndEachAlone) {
  const fs::path yaml = dir_ / "jobs.yaml";
  std::ofstream(yaml) << R"(name: jobs
testbed: {virtual: {hosts: 4, leaves: 2, spines: 1}, ranks_per_host: 2}
jobs:
  - {name: train, hosts: [0, 2], workload: {collectives: {kind: all-reduce, bytes: 1MiB, count: 3}}}
  - {name: tenant, hosts: [3, 1], workload: {collectives: {kind: all-to-all, bytes: 64KiB}}}
runs: {baseline: true, alone: true}
)";
  auto s = load_scenario(yaml.string());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto jobs = prepare_jobs_workload(*s, 8, dir_);
  ASSERT_TRUE(jobs.ok()) << jobs.status().to_string();
  const RankOps together = rank_ops(jobs->together);
  EXPECT_EQ(together.world, 8u);
  EXPECT_EQ(together.members.at("train/world"), (std::vector<uint32_t>{0, 1, 4, 5}));
  // The job's rank order follows its hosts as listed: host 3 first.
  EXPECT_EQ(together.members.at("tenant/world"), (std::vector<uint32_t>{6, 7, 2, 3}));
  for (uint32_t r : {0u, 1u, 4u, 5u}) {
    EXPECT_EQ(together.comms.at(r), (std::vector<std::string>(3, "train/world"))) << r;
  }
  for (uint32_t r : {2u, 3u, 6u, 7u}) EXPECT_EQ(together.comms.at(r), (std::vector<std::string>{"tenant/world"})) << r;

  ASSERT_EQ(jobs->alone.size(), 2u);
  EXPECT_EQ(jobs->alone[1].first, "tenant");
  const RankOps alone = rank_ops(jobs->alone[1].second);
  EXPECT_EQ(alone.world, 8u);
  EXPECT_EQ(alone.members.size(), 1u);
  EXPECT_EQ(alone.comms.size(), 4u);  // only the tenant's ranks issue anything
  EXPECT_EQ(alone.comms.count(0), 0u);
  EXPECT_EQ(alone.comms.at(6), (std::vector<std::string>{"tenant/world"}));
}

TEST_F(WorkloadTest, AJobsTraceOfAnotherSizeOrOnAnotherJobsRanksIsRefusedNamingTheJob) {
  std::ofstream(dir_ / "j.yaml") << R"(name: j
testbed: {virtual: {hosts: 2}, ranks_per_host: 1}
workload: {collectives: {kind: all-reduce, bytes: 4KiB}}
runs: {baseline: true}
)";
  auto one = load_scenario((dir_ / "j.yaml").string());
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  auto two_ranks = prepare_workload(*one, 2, dir_);
  ASSERT_TRUE(two_ranks.ok()) << two_ranks.status().to_string();
  EXPECT_THAT(merge_job_traces({{"a", *two_ranks, {0, 1, 2}}}, 4, (dir_ / "m.trace").string()),
              StatusIs(StatusCode::kInvalidArgument, "job a: its trace has 2 ranks but it runs on 3"));
  EXPECT_THAT(merge_job_traces({{"a", *two_ranks, {0, 1}}, {"b", *two_ranks, {1, 2}}}, 4, (dir_ / "m.trace").string()),
              StatusIs(StatusCode::kInvalidArgument, "job b: rank 1 is outside the testbed or another job's"));
}

}  // namespace
}  // namespace collide::orchestrator
