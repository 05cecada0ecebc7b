// `collide trace stats`, `trace validate` and `trace synth` through the real binary: output, JSON,
// exit codes (validate: 0 valid, 1 not, 2 unreadable).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/process.h"
#include "traces/trace_io.h"

namespace collide {
namespace {

class TraceAnalysisCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("collide-trace-stats-" + std::to_string(getpid()) + ".trace"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // Llama3-70B data parallel on 8 GPUs: each rank all-reduces 140e9 bytes of bf16 gradients.
  // `bad_rank` >= 0 gives that rank a different size.
  void write_llama_dp(int bad_rank = -1) {
    v1::TraceHeader h;
    h.set_world_size(8);
    auto* comm = h.add_communicators();
    comm->set_id("dp");
    for (uint32_t r = 0; r < 8; ++r) comm->add_ranks(r);
    auto writer = traces::TraceWriter::create(path_, h);
    ASSERT_TRUE(writer.ok());
    for (uint32_t r = 0; r < 8; ++r) {
      v1::Op op;
      op.set_rank(r);
      op.set_kind(v1::OP_KIND_ALL_REDUCE);
      op.set_comm("dp");
      op.set_datatype(v1::DATA_TYPE_BFLOAT16);
      op.set_count(static_cast<int>(r) == bad_rank ? 1000 : 70'000'000'000);
      op.set_bytes(op.count() * 2);
      op.set_reduce_op(v1::REDUCE_OP_SUM);
      op.set_source("job.log:" + std::to_string(10 + r));
      ASSERT_TRUE((*writer)->write(op).ok());
    }
    ASSERT_TRUE((*writer)->close().ok());
  }

  std::string path_;
};

TEST_F(TraceAnalysisCommandTest, StatsTableShowsBothModels) {
  write_llama_dp();
  auto out = process::run_command({COLLIDE_BIN, "trace", "stats", path_});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->exit_code, 0) << out->output;
  EXPECT_NE(out->output.find("full-mesh GB"), std::string::npos) << out->output;
  EXPECT_NE(out->output.find("7840.000"), std::string::npos) << out->output;
  EXPECT_NE(out->output.find("1960.000"), std::string::npos) << out->output;
}

TEST_F(TraceAnalysisCommandTest, StatsJsonPerEpoch) {
  write_llama_dp();
  auto out = process::run_command(
      {COLLIDE_BIN, "trace", "stats", path_, "--json", "--minibatches-per-epoch", "178000"});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->exit_code, 0) << out->output;
  const auto j = nlohmann::json::parse(out->output);
  EXPECT_EQ(j["job"]["full_mesh_bytes"].get<uint64_t>(), 7'840'000'000'000u);
  EXPECT_EQ(j["job"]["nccl_bytes"].get<uint64_t>(), 1'960'000'000'000u);
  EXPECT_EQ(j["job"]["instances"].get<uint64_t>(), 1u);
  EXPECT_DOUBLE_EQ(j["epoch"]["full_mesh_bytes"].get<double>(), 7840e9 * 178000);
}

TEST_F(TraceAnalysisCommandTest, ValidateExitCodes) {
  write_llama_dp();
  auto good = process::run_command({COLLIDE_BIN, "trace", "validate", path_});
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->exit_code, 0) << good->output;
  EXPECT_NE(good->output.find("valid (8 ops)"), std::string::npos) << good->output;

  write_llama_dp(5);
  auto bad = process::run_command({COLLIDE_BIN, "trace", "validate", path_});
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 1) << bad->output;
  EXPECT_NE(bad->output.find("comm dp, rank 5, op 0 (job.log:15)"), std::string::npos)
      << bad->output;
  EXPECT_NE(bad->output.find("1 mismatches"), std::string::npos) << bad->output;

  auto json = process::run_command({COLLIDE_BIN, "trace", "validate", path_, "--json"});
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->exit_code, 1);
  const auto j = nlohmann::json::parse(json->output);
  EXPECT_FALSE(j["valid"].get<bool>());
  EXPECT_EQ(j["issues"][0]["rank"].get<uint32_t>(), 5u);
  EXPECT_EQ(j["issues"][0]["source"].get<std::string>(), "job.log:15");

  auto missing = process::run_command({COLLIDE_BIN, "trace", "validate", path_ + ".nope"});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->exit_code, 2) << missing->output;
  EXPECT_NE(missing->output.find(path_ + ".nope"), std::string::npos) << missing->output;
  auto stats_missing = process::run_command({COLLIDE_BIN, "trace", "stats", path_ + ".nope"});
  ASSERT_TRUE(stats_missing.ok());
  EXPECT_EQ(stats_missing->exit_code, 2) << stats_missing->output;
}

// Progress into a pipe (a CI log) is plain lines: no carriage return redraws a line and no
// terminal escape clears one. run_command reads stderr through a pipe.
TEST_F(TraceAnalysisCommandTest, ProgressIntoAPipeHasNoCarriageReturnsOrEscapes) {
  auto synth = process::run_command({COLLIDE_BIN, "trace", "synth", "-m",
                                     COLLIDE_SOURCE_DIR "/configs/models/llama3-70b.yaml", "--tp",
                                     "2", "--pp", "2", "--dp", "2", "--global-batch", "8", "-o",
                                     path_});
  ASSERT_TRUE(synth.ok()) << synth.status().to_string();
  ASSERT_EQ(synth->exit_code, 0) << synth->output;
  EXPECT_NE(synth->output.find("synth: 8 of 8 ranks (100%)\n"), std::string::npos)
      << synth->output;
  for (const char* what : {"stats", "validate"}) {
    auto out = process::run_command({COLLIDE_BIN, "trace", what, path_});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(out->exit_code, 0) << out->output;
    EXPECT_EQ(out->output.find_first_of("\r\x1b"), std::string::npos) << what;
  }
  EXPECT_EQ(synth->output.find_first_of("\r\x1b"), std::string::npos) << synth->output;
}

}  // namespace
}  // namespace collide
