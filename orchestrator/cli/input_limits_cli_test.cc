// Sizes and counts past collide's limits (common/input_limits.h) through the real binary: a
// usage exit (2) with the op or option named, where they used to abort on bad_alloc, pass
// validation, or mean "forever".
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "common/process.h"
#include "traces/trace_io.h"

namespace collide {
namespace {

namespace fs = std::filesystem;

class InputLimitsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collide-limits-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A trace of `world` ranks (the header says so) whose ranks 0 and 1 each all-reduce `bytes`.
  std::string trace(uint32_t world, uint64_t bytes) {
    const std::string path = (dir_ / "job.trace").string();
    v1::TraceHeader header;
    header.set_world_size(world);
    auto* comm = header.add_communicators();
    comm->set_id("world");
    comm->add_ranks(0);
    comm->add_ranks(1);
    auto writer = traces::TraceWriter::create(path, header);
    EXPECT_TRUE(writer.ok());
    for (uint32_t r = 0; r < 2; ++r) {
      v1::Op op;
      op.set_rank(r);
      op.set_kind(v1::OP_KIND_ALL_REDUCE);
      op.set_comm("world");
      op.set_bytes(bytes);
      op.set_count(bytes / 2);
      EXPECT_TRUE((*writer)->write(op).ok());
    }
    EXPECT_TRUE((*writer)->close().ok());
    return path;
  }

  fs::path dir_;
};

TEST_F(InputLimitsCliTest, TraceValidateRefusesAnOpOfAPetabyte) {
  const std::string path = trace(2, uint64_t{1} << 50);
  auto out = process::run_command({COLLIDE_BIN, "trace", "validate", path, "--quiet"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("op #1 (rank 0, index 0): bytes: 1125899906842624 is above"), std::string::npos)
      << out->output;
}

TEST_F(InputLimitsCliTest, PlanRefusesAWorldOfFourBillionRanks) {
  const std::string path = trace(4'000'000'000u, 4096);
  auto out = process::run_command({COLLIDE_BIN, "plan", path, "--ranks-per-host=8"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("world_size: 4000000000 is above"), std::string::npos) << out->output;
}

TEST_F(InputLimitsCliTest, TraceValidateRefusesAWorldOfFourBillionRanks) {
  const std::string path = trace(4'000'000'000u, 4096);
  auto out = process::run_command({COLLIDE_BIN, "trace", "validate", path, "--quiet"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("world_size: 4000000000 is above"), std::string::npos) << out->output;
}

// A duration of 0 would inject until interrupted; leaving --duration out says so on purpose. The
// device does not exist, so nothing is attached whichever way the check goes.
TEST_F(InputLimitsCliTest, InjectRefusesADurationOfZero) {
  auto out = process::run_command({COLLIDE_BIN, "inject", "--dev", "collide-no-such-dev", "--duration", "0",
                                   "--loss", "1%"});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("--duration"), std::string::npos) << out->output;
}

}  // namespace
}  // namespace collide
