// Stats and validation of a trace of 10^6 ops, written rank by rank (the layout importers
// produce and the hardest for streaming), in a child process whose peak RSS is measured.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>

#include "traces/analysis/test_traces.h"
#include "traces/analysis/trace_stats.h"
#include "traces/analysis/trace_validator.h"
#include "traces/trace_io.h"

namespace collide::traces::analysis {
namespace {

constexpr uint32_t kRanks = 8;
constexpr uint64_t kOpsPerRank = 125'000;  // 10^6 ops in all
constexpr uint64_t kBadIndex = 100'000;    // rank 7's op with a different size

// Per rank and step of 4 ops: all-reduce, all-gather, a send or recv to the neighbour rank,
// and a broadcast.
v1::Op op_of(uint32_t r, uint64_t i) {
  const uint64_t bytes = 4096 + (i % 13) * 512;
  v1::Op op;
  switch (i % 4) {
    case 0:
      op = testing::make_op(r, i, v1::OP_KIND_ALL_REDUCE, "world", bytes);
      break;
    case 1:
      op = testing::make_op(r, i, v1::OP_KIND_ALL_GATHER, "world", bytes);
      break;
    case 2:
      op = testing::make_op(r, i, r % 2 == 0 ? v1::OP_KIND_SEND : v1::OP_KIND_RECV, "world", bytes,
                            r % 2 == 0 ? r + 1 : r - 1);
      break;
    default:
      op = testing::make_op(r, i, v1::OP_KIND_BROADCAST, "world", bytes, 0);
      break;
  }
  op.set_iteration(static_cast<uint32_t>(i / 1000));
  if (r == 7 && i == kBadIndex) op.set_bytes(op.bytes() + 2);
  return op;
}

Status write_big_trace(const std::string& path) {
  std::vector<uint32_t> world;
  for (uint32_t r = 0; r < kRanks; ++r) world.push_back(r);
  auto writer = TraceWriter::create(path, testing::make_header(kRanks, {{"world", world}}));
  if (!writer.ok()) return writer.status();
  for (uint32_t r = 0; r < kRanks; ++r) {
    for (uint64_t i = 0; i < kOpsPerRank; ++i)
      COLLIDE_RETURN_IF_ERROR((*writer)->write(op_of(r, i)));
  }
  return (*writer)->close();
}

// Runs `work` in a child; returns its exit code and peak resident set in KiB.
std::pair<int, long> run_child(const std::function<int()>& work) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) _exit(work());
  int status = 0;
  struct rusage usage {};
  EXPECT_EQ(wait4(pid, &status, 0, &usage), pid);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

TEST(Streaming, MillionOpTraceInBoundedMemory) {
  const std::string path = testing::temp_trace_path("million");
  ASSERT_TRUE(write_big_trace(path).ok());
  const auto file_mib = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);

  const auto [idle_code, idle_kib] = run_child([] { return 0; });
  ASSERT_EQ(idle_code, 0);

  const auto [stats_code, stats_kib] = run_child([&path] {
    auto s = compute_trace_stats(path);
    if (!s.ok()) return 10;
    if (s->job.issued_ops != kRanks * kOpsPerRank) return 11;
    // 125000 / 4 = 31250 instances of each collective and of the 4 pairs' sends.
    if (s->by_kind.at(v1::OP_KIND_ALL_REDUCE).instances != kOpsPerRank / 4) return 12;
    if (s->by_kind.at(v1::OP_KIND_SEND).instances != kRanks / 2 * kOpsPerRank / 4) return 13;
    if (s->by_iteration.size() != kOpsPerRank / 1000) return 14;
    return 0;
  });
  EXPECT_EQ(stats_code, 0);

  const auto [validate_code, validate_kib] = run_child([&path] {
    auto r = validate_trace(path, {});
    if (!r.ok()) return 20;
    if (r->ops_read != kRanks * kOpsPerRank) return 21;
    if (r->issues_total != 1 || r->issues.size() != 1) return 22;
    if (r->issues[0].rank != 7u || r->issues[0].op_index != kBadIndex) return 23;
    return 0;
  });
  EXPECT_EQ(validate_code, 0);

  std::printf(
      "trace of %llu ops, %.1f MiB; peak RSS: idle child %ld KiB, stats %ld KiB, "
      "validate (two passes) %ld KiB\n",
      static_cast<unsigned long long>(kRanks * kOpsPerRank), file_mib, idle_kib, stats_kib,
      validate_kib);
  ::testing::Test::RecordProperty("stats_peak_rss_kib", static_cast<int>(stats_kib));
  ::testing::Test::RecordProperty("validate_peak_rss_kib", static_cast<int>(validate_kib));
  // Holding the ops would take well over the file's size; streaming needs a few MiB above the
  // process's own footprint.
  EXPECT_LT(stats_kib - idle_kib, 16 * 1024);
  EXPECT_LT(validate_kib - idle_kib, 16 * 1024);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace collide::traces::analysis
