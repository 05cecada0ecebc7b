// `collide run` when a host's replay fails: the other hosts are stopped at once instead of waiting
// out the run timeout for a peer that will never come, the run exits with a failure that says why,
// and the partial report is still written. Needs root (namespaces, BPF, AF_XDP).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"
#include "tests/support/process_inspect.h"
#include "traces/trace_io.h"

namespace collide {
namespace {

using testing::processes_with;

class RunFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("rf", "collide-run-failure");
  }
  void TearDown() override { run_dir_.reset(); }

  const std::filesystem::path& dir() const { return run_dir_->dir(); }

  // Two ranks, one broadcast from rank 0: a valid job. Everything host 0 sends is lost (a
  // blackhole on its link, towards the fabric), so rank 0 resends until its transport gives up
  // (8 attempts of 4 ms: NCCL's "retry counter exceeded") while rank 1, which only receives, waits
  // for data that never comes (it has nothing to resend, so nothing of its own times out).
  std::string write_trace() {
    v1::TraceHeader header;
    header.set_world_size(2);
    auto* comm = header.add_communicators();
    comm->set_id("world");
    comm->add_ranks(0);
    comm->add_ranks(1);
    const std::string path = (dir() / "broadcast.trace").string();
    auto writer = traces::TraceWriter::create(path, header);
    EXPECT_TRUE(writer.ok()) << writer.status().to_string();
    if (!writer.ok()) return path;
    for (uint32_t r = 0; r < 2; ++r) {
      v1::Op op;
      op.set_rank(r);
      op.set_kind(v1::OP_KIND_BROADCAST);
      op.set_root(0);
      op.set_comm("world");
      op.set_datatype(v1::DATA_TYPE_BFLOAT16);
      op.set_count(32768);
      op.set_bytes(65536);
      EXPECT_TRUE((*writer)->write(op).ok());
    }
    EXPECT_TRUE((*writer)->close().ok());
    return path;
  }

  std::string write_scenario(const std::string& trace) {
    const auto path = dir() / "scenario.yaml";
    std::ofstream(path) << fmt::format(R"(name: run-failure
testbed:
  virtual: {{name: {}, hosts: 2, nics_per_host: 1, leaves: 1, spines: 1}}
  ranks_per_host: 1
workload: {{trace: {}}}
transport: {{mtu_bytes: 1024, timeout_exponent: 10, retry_count: 7}}
faults:
  - {{name: cut, kind: blackhole, link: h0, direction: from-host, duration_ns: 60s}}
runs:
  baseline: false
  variants: [{{name: cut-off, faults: [cut]}}]
)",
                                       run_dir_->bed(), trace);
    return path.string();
  }

  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(RunFailureTest, AFailedReplayStopsTheOtherHostsAtOnceAndFailsTheRun) {
  const std::string scenario = write_scenario(write_trace());
  const auto began = std::chrono::steady_clock::now();
  auto run = process::run_command({COLLIDE_BIN, "run", scenario, "--output", (dir() / "results").string(),
                                   "--run-timeout", "60"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::cout << fmt::format("collide run took {:.2f} s\n", took);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 1) << run->output;
  // Host 1 waited for a rank that had failed; it is stopped, not left to the 60 s timeout.
  EXPECT_LT(took, 15.0) << run->output;
  EXPECT_NE(run->output.find("retry counter exceeded"), std::string::npos) << run->output;
  EXPECT_NE(run->output.find("cut-off"), std::string::npos) << run->output;
  // The partial report is written and names the failure.
  std::ifstream in(dir() / "results" / "report.json");
  ASSERT_TRUE(in.good()) << run->output;
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object());
  EXPECT_NE(report.dump().find("retry counter exceeded"), std::string::npos) << report.dump();
  EXPECT_TRUE(processes_with({dir().string()}).empty());
  EXPECT_FALSE(run_dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
