#include "orchestrator/report/run_log.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::report {
namespace {

using namespace std::chrono_literals;

// A run of two ranks whose all-reduces took 100, 200 and 300 us, back to back from t = 1 ms.
RunResult three_all_reduces() {
  RunResult run;
  run.variant = "loss";
  run.repetition = 4;
  run.started = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'764'310'200'123));
  run.retransmitted_packets = 17;
  run.timeouts = 2;
  run.faults = {{"flap#1", "link-flap", 1'100'000, 1'150'000, 0, 0},
                {"flap#2", "link-flap", 1'500'000, 0, 4, 3},
                {"flap#3", "link-flap", 0, 0, 0, 0},
                {"flap#4", "link-flap", 9'000'000, 9'100'000, 0, 0}};  // after the last op's end
  uint64_t t = 1'000'000;
  for (uint64_t k = 0; k < 3; ++k) {
    const uint64_t took = (k + 1) * 100'000;
    for (uint32_t rank = 0; rank < 2; ++rank) {
      OpTiming op;
      op.rank = rank;
      op.op_index = k;
      op.kind = v1::OP_KIND_ALL_REDUCE;
      op.comm = "world";
      op.comm_size = 2;
      op.bytes = 1 << 20;
      op.start_ns = t;
      op.end_ns = t + took;
      run.ops.push_back(op);
    }
    t += took;
  }
  return run;
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class RunLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("collide-run-log-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = dir_ / "runs.jsonl";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_, path_;
};

TEST_F(RunLogTest, EachRunIsALineOfJsonWithItsMeasurements) {
  auto log = RunLog::create(path_);
  ASSERT_THAT(log, IsOk());
  ASSERT_THAT(log->append(run_log_entry(three_all_reduces(), 5)), IsOk());
  RunResult failed;
  failed.variant = "baseline";
  failed.repetition = 5;
  failed.failed = true;
  failed.failure = "host 1: killed by signal 9; ";
  ASSERT_THAT(log->append(run_log_entry(failed, 6)), IsOk());

  const auto lines = lines_of(path_);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("{\"variant\":\"loss\",\"repetition\":4,\"iteration\":5,", 0), 0u) << lines[0];
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["variant"], "loss");
  EXPECT_EQ(first["repetition"], 4);
  EXPECT_EQ(first["iteration"], 5);
  EXPECT_EQ(first["started"], "2025-11-28T06:10:00.123Z");
  EXPECT_DOUBLE_EQ(first["jct_s"].get<double>(), 600e-6);  // 100 + 200 + 300 us
  EXPECT_EQ(first["failed"], false);
  EXPECT_EQ(first["failure"], "");
  EXPECT_EQ(first["collectives"], 3);
  EXPECT_DOUBLE_EQ(first["p50_us"].get<double>(), 200);
  EXPECT_NEAR(first["p99_us"].get<double>(), 298, 1e-9);  // between 200 and 300 at 0.99 of the way
  EXPECT_EQ(first["retransmitted_packets"], 17);
  EXPECT_EQ(first["timeouts"], 2);
  // Each occurrence of the recurring flap that held, from the first op; those that never did
  // (the run ended first) are left out.
  ASSERT_EQ(first["faults"].size(), 2u) << first.dump();
  EXPECT_EQ(first["faults"][0]["name"], "flap#1");
  EXPECT_EQ(first["faults"][0]["kind"], "link-flap");
  EXPECT_DOUBLE_EQ(first["faults"][0]["start_ms"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(first["faults"][0]["end_ms"].get<double>(), 0.15);
  EXPECT_EQ(first["faults"][1]["name"], "flap#2");
  EXPECT_TRUE(first["faults"][1]["end_ms"].is_null()) << "held to the run's end";
  EXPECT_EQ(first["faults"][1]["packets_acted"], 3);

  const auto second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(second["failed"], true);
  EXPECT_EQ(second["failure"], "host 1: killed by signal 9");
  EXPECT_TRUE(second["jct_s"].is_null());
  EXPECT_TRUE(second["started"].is_null()) << "stopped before it started";
  EXPECT_EQ(second["collectives"], 0);
  EXPECT_TRUE(second["p50_us"].is_null());
  EXPECT_TRUE(second["p99_us"].is_null());
}

TEST_F(RunLogTest, ACollectiveSomeRankNeverFinishedIsNotCounted) {
  RunResult run = three_all_reduces();
  run.ops.pop_back();  // rank 1 never finished the last all-reduce (the run was stopped)
  run.failed = true;
  const RunLogEntry e = run_log_entry(run, 1);
  EXPECT_EQ(e.collectives, 2u);
  EXPECT_FALSE(e.jct_s.has_value());
  ASSERT_TRUE(e.p50_us.has_value());
  EXPECT_DOUBLE_EQ(*e.p50_us, 150);
}

TEST_F(RunLogTest, CreatingTheLogEmptiesTheLastRunsLog) {
  std::ofstream(path_) << "{\"variant\":\"old\"}\n";
  auto log = RunLog::create(path_);
  ASSERT_THAT(log, IsOk());
  EXPECT_EQ(text_of(path_), "");
  EXPECT_THAT(RunLog::create(dir_ / "no-such-folder" / "runs.jsonl"), StatusIs(StatusCode::kNotFound));
}

// A write the file system cuts short (here the file size limit; a full disk does the same) leaves
// no half line: the part that went out is cut off again and the append says why.
TEST_F(RunLogTest, ALineThatCannotBeWrittenWholeIsCutOffAgain) {
  {
    auto log = RunLog::create(path_);
    ASSERT_THAT(log, IsOk());
    ASSERT_THAT(log->append(run_log_entry(three_all_reduces(), 1)), IsOk());
  }
  const std::string before = text_of(path_);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Room for a few bytes of the next line only; past it, write fails (EFBIG) instead of killing.
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{before.size() + 10, before.size() + 10};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    auto log = RunLog::create(path_);  // empties it: put the first line back within the limit
    if (!log.ok()) _exit(4);
    if (!log->append(run_log_entry(three_all_reduces(), 1)).ok()) _exit(5);
    const Status second = log->append(run_log_entry(three_all_reduces(), 2));
    _exit(second.ok() ? 1 : second.message().find("File too large") != std::string::npos ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the append did not fail, 2: not for the size limit, 3-5: setup";
  EXPECT_EQ(text_of(path_), before);
}

// A writer killed at any moment leaves whole lines only.
TEST_F(RunLogTest, AWriterKilledMidStreamLeavesOnlyWholeLines) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::filesystem::remove(path_);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto log = RunLog::create(path_);
      if (!log.ok()) _exit(1);
      const RunResult run = three_all_reduces();
      for (uint32_t i = 1;; ++i) {
        if (!log->append(run_log_entry(run, i)).ok()) _exit(2);
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (text_of(path_).size() < 5'000 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100 * attempt));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    ASSERT_EQ(waitpid(child, nullptr, 0), child);

    const std::string text = text_of(path_);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    uint32_t expected = 1;
    for (const std::string& line : lines_of(path_)) {
      const auto json = nlohmann::json::parse(line, nullptr, false);
      ASSERT_FALSE(json.is_discarded()) << line.substr(0, 80);
      EXPECT_EQ(json["iteration"], expected++);
    }
  }
}

}  // namespace
}  // namespace collide::orchestrator::report
