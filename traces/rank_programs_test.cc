#include "traces/rank_programs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/status_matchers.h"
#include "traces/trace_io.h"

namespace collide::traces {
namespace {

std::string write_trace(const std::string& name, uint32_t world, int ops_per_rank,
                        bool break_order = false) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            (name + "-" + std::to_string(getpid()) + ".trace")).string();
  v1::TraceHeader h;
  h.set_world_size(world);
  auto writer = TraceWriter::create(path, h);
  EXPECT_TRUE(writer.ok());
  for (int i = 0; i < ops_per_rank; ++i) {
    for (uint32_t r = 0; r < world; ++r) {
      v1::Op op;
      op.set_rank(r);
      op.set_index(break_order && r == 1 && i == 1 ? 5 : static_cast<uint64_t>(i));
      op.set_bytes(100 * r + static_cast<uint64_t>(i));
      EXPECT_TRUE((*writer)->write(op).ok());
    }
  }
  EXPECT_TRUE((*writer)->close().ok());
  return path;
}

TEST(RankProgramsTest, KeepsOnlyTheAskedRanksInOrder) {
  const std::string path = write_trace("programs", 4, 3);
  auto p = read_rank_programs(path, {1, 3});
  std::filesystem::remove(path);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->ops.size(), 2u);
  ASSERT_EQ(p->ops.at(3).size(), 3u);
  EXPECT_EQ(p->ops.at(3)[2].bytes(), 302u);
  EXPECT_EQ(p->ops.at(1)[0].bytes(), 100u);
  EXPECT_EQ(p->header.world_size(), 4u);
}

TEST(RankProgramsTest, RejectsUnknownRanksAndBrokenOrder) {
  const std::string path = write_trace("programs-bad", 2, 3, true);
  EXPECT_THAT(read_rank_programs(path, {7}), StatusIs(StatusCode::kInvalidArgument));
  auto p = read_rank_programs(path, {1});
  std::filesystem::remove(path);
  ASSERT_THAT(p, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(p.status().message().find("rank 1 op index 5"), std::string::npos);
}

}  // namespace
}  // namespace collide::traces
