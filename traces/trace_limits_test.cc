// Traces whose sizes and counts no consumer could hold are refused as they are read, by the one
// reader every command goes through, with the op and the field named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/input_limits.h"
#include "tests/support/status_matchers.h"
#include "traces/trace_io.h"

namespace collide::traces {
namespace {

class TraceLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("collide-trace-limits-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".trace"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // A two-rank trace (or `world` ranks) whose only op is `op`.
  void write(const v1::Op& op, uint32_t world = 2) {
    v1::TraceHeader header;
    header.set_world_size(world);
    auto* comm = header.add_communicators();
    comm->set_id("world");
    comm->add_ranks(0);
    comm->add_ranks(1);
    auto writer = TraceWriter::create(path_, header);
    ASSERT_TRUE(writer.ok()) << writer.status().to_string();
    ASSERT_TRUE((*writer)->write(op).ok());
    ASSERT_TRUE((*writer)->close().ok());
  }

  // Reads the whole trace; the first error, or OK.
  Status read_all() {
    auto reader = TraceReader::open(path_);
    if (!reader.ok()) return reader.status();
    v1::Op op;
    for (;;) {
      auto more = (*reader)->next(op);
      if (!more.ok()) return more.status();
      if (!*more) return {};
    }
  }

  static v1::Op all_reduce(uint64_t bytes) {
    v1::Op op;
    op.set_rank(1);
    op.set_index(0);
    op.set_kind(v1::OP_KIND_ALL_REDUCE);
    op.set_comm("world");
    op.set_bytes(bytes);
    op.set_count(bytes / 2);
    return op;
  }

  std::string path_;
};

TEST_F(TraceLimitsTest, AnOpOfTheLargestSizeReads) {
  write(all_reduce(limits::kMaxOpBytes));
  EXPECT_TRUE(read_all().ok()) << read_all().to_string();
}

TEST_F(TraceLimitsTest, AnOpAbovePetabytesIsRefusedNamingTheOpAndField) {
  write(all_reduce(uint64_t{1} << 50));
  const Status s = read_all();
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.message().find(path_ + ": op #1 (rank 1, index 0): bytes: 1125899906842624 is above "),
            std::string::npos)
      << s.message();
}

TEST_F(TraceLimitsTest, AnAllToAllvPeerSizeAboveTheLimitIsRefused) {
  v1::Op op = all_reduce(4096);
  op.set_kind(v1::OP_KIND_ALL_TO_ALLV);
  op.add_peer_bytes(16);
  op.add_peer_bytes(uint64_t{1} << 50);
  write(op);
  const Status s = read_all();
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.message().find("peer_bytes[1]: 1125899906842624 is above"), std::string::npos) << s.message();
}

TEST_F(TraceLimitsTest, AWorldOfFourBillionRanksIsRefusedAtOpen) {
  write(all_reduce(4096), 4'000'000'000u);
  auto reader = TraceReader::open(path_);
  ASSERT_THAT(reader, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(reader.status().message().find(path_ + ": header: world_size: 4000000000 is above"),
            std::string::npos)
      << reader.status().message();
}

TEST_F(TraceLimitsTest, ACommunicatorRankBeyondTheLimitIsRefusedAtOpen) {
  v1::TraceHeader header;
  auto* comm = header.add_communicators();
  comm->set_id("dp");
  comm->add_ranks(4'000'000'000u);
  auto writer = TraceWriter::create(path_, header);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->close().ok());
  auto reader = TraceReader::open(path_);
  ASSERT_THAT(reader, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(reader.status().message().find("header: communicators[0] 'dp': rank 4000000000 is above"),
            std::string::npos)
      << reader.status().message();
}

}  // namespace
}  // namespace collide::traces
