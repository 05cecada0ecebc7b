// `workload.timing: trace`: the compute gaps a trace records between a rank's ops are reproduced
// by `collide run` (each next op starts that long after the previous one ended), and `fast` runs
// the same ops back to back. Needs root (a virtual testbed, AF_XDP).
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "tests/support/privileged.h"
#include "traces/trace_io.h"

namespace collide {
namespace {

// A uint64 field of protobuf's JSON (a quoted number; absent when 0).
uint64_t number(const nlohmann::json& op, const char* field) {
  const std::string text = op.value(field, std::string("0"));
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  EXPECT_TRUE(ec == std::errc() && end == text.data() + text.size()) << field << ": " << text;
  return n;
}

// The gap recorded before each op after the first, per rank (ms): different, so that a replay
// that waited the wrong one, or a fixed one, shows.
const std::vector<uint64_t> kGapsMs = {150, 40, 250};
constexpr uint32_t kWorld = 2;

class TraceTimingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_netns());
    COLLIDE_REQUIRE(testing::missing_bpf());
    COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
    COLLIDE_REQUIRE(testing::missing_tool("setpriv"));
    bed_ = fmt::format("tt{}", getpid() % 10000);
    dir_ = std::filesystem::temp_directory_path() / fmt::format("collide-trace-timing-{}", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    write_trace();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void write_trace() {
    v1::TraceHeader header;
    header.set_world_size(kWorld);
    auto* comm = header.add_communicators();
    comm->set_id("world");
    for (uint32_t r = 0; r < kWorld; ++r) comm->add_ranks(r);
    auto writer = traces::TraceWriter::create((dir_ / "gaps.trace").string(), header);
    ASSERT_TRUE(writer.ok()) << writer.status().to_string();
    for (uint32_t r = 0; r < kWorld; ++r) {
      for (size_t i = 0; i <= kGapsMs.size(); ++i) {
        v1::Op op;
        op.set_rank(r);
        op.set_index(i);
        op.set_kind(v1::OP_KIND_ALL_REDUCE);
        op.set_comm("world");
        op.set_bytes(256 * 1024);
        if (i > 0) op.set_compute_before_ns(kGapsMs[i - 1] * 1'000'000);
        ASSERT_TRUE((*writer)->write(op).ok());
      }
    }
    ASSERT_TRUE((*writer)->close().ok());
  }

  // Runs the trace with `timing`; per rank, the gaps between its ops as replayed (ms).
  std::map<uint32_t, std::vector<double>> replayed_gaps(const std::string& timing) {
    const auto out = dir_ / timing;
    const auto scenario = dir_ / (timing + ".yaml");
    std::ofstream(scenario) << fmt::format(R"(name: trace-timing
testbed:
  virtual: {{name: {}, hosts: {}, nics_per_host: 1, leaves: 1, spines: 1}}
  ranks_per_host: 1
workload:
  trace: {}
  timing: {}
runs:
  baseline: true
)",
                                           bed_, kWorld, (dir_ / "gaps.trace").string(), timing);
    auto run = process::run_command({COLLIDE_BIN, "run", scenario.string(), "--output", out.string()});
    EXPECT_TRUE(run.ok() && run->exit_code == 0) << (run.ok() ? run->output : run.status().message());
    std::map<uint32_t, std::vector<double>> gaps;
    for (uint32_t h = 0; h < kWorld; ++h) {
      // The agent's record of the run: its RunCompletion as protobuf's JSON (64-bit numbers quoted).
      std::ifstream in(out / "work" / fmt::format("agent-{}", h) / fmt::format("run-0-host-{}.completion.json", h));
      const auto j = nlohmann::json::parse(in, nullptr, false);
      EXPECT_TRUE(j.is_object()) << "host " << h << " left no record";
      if (!j.is_object()) continue;
      std::map<uint64_t, std::pair<uint64_t, uint64_t>> ops;  // op index -> start, end
      for (const auto& op : j["ops"]) {
        ops[number(op, "op_index")] = {number(op, "start_ns"), number(op, "end_ns")};
      }
      uint64_t previous_end = 0;
      for (const auto& [index, times] : ops) {
        if (previous_end != 0) gaps[h].push_back(static_cast<double>(times.first - previous_end) / 1e6);
        previous_end = times.second;
      }
    }
    return gaps;
  }

  std::string bed_;
  std::filesystem::path dir_;
};

TEST_F(TraceTimingTest, TraceTimingReproducesTheRecordedGapsAndFastSkipsThem) {
  const auto traced = replayed_gaps("trace");
  const auto fast = replayed_gaps("fast");
  for (uint32_t r = 0; r < kWorld; ++r) {
    ASSERT_EQ(traced.count(r), 1u);
    ASSERT_EQ(traced.at(r).size(), kGapsMs.size());
    for (size_t i = 0; i < kGapsMs.size(); ++i) {
      const double want = static_cast<double>(kGapsMs[i]);
      // Never shorter than recorded; longer only by scheduling and polling (a few ms here).
      EXPECT_GE(traced.at(r)[i], want - 0.5) << "rank " << r << " gap " << i;
      EXPECT_LE(traced.at(r)[i], want + 20) << "rank " << r << " gap " << i;
      std::cout << fmt::format("rank {} gap {}: recorded {} ms, replayed {:.2f} ms, fast {:.2f} ms\n",
                               r, i, kGapsMs[i], traced.at(r)[i], fast.count(r) ? fast.at(r)[i] : -1);
    }
    ASSERT_EQ(fast.count(r), 1u);
    for (double g : fast.at(r)) EXPECT_LT(g, 20.0) << "rank " << r;
  }
}

}  // namespace
}  // namespace collide
