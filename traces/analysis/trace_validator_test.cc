#include "traces/analysis/trace_validator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/support/status_matchers.h"
#include "traces/analysis/test_traces.h"

namespace collide::traces::analysis {
namespace {

using testing::make_header;
using testing::make_op;

// Four ranks: collectives on "world", sends 0 -> 1 and 2 -> 3 on "world", a broadcast.
// Per rank: 0 all_reduce, 1 all_gather, 2 send or recv, 3 broadcast, 4 all_reduce.
std::vector<v1::Op> good_ops() {
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < 4; ++r) {
    ops.push_back(make_op(r, 0, v1::OP_KIND_ALL_REDUCE, "world", 1 << 20));
    ops.push_back(make_op(r, 1, v1::OP_KIND_ALL_GATHER, "world", 1 << 18));
    const bool sender = r % 2 == 0;
    ops.push_back(make_op(r, 2, sender ? v1::OP_KIND_SEND : v1::OP_KIND_RECV, "world", 4096,
                          sender ? r + 1 : r - 1));
    ops.push_back(make_op(r, 3, v1::OP_KIND_BROADCAST, "world", 8192, 0));
    ops.push_back(make_op(r, 4, v1::OP_KIND_ALL_REDUCE, "world", 1 << 16));
  }
  return ops;
}

v1::Op& find(std::vector<v1::Op>& ops, uint32_t rank, uint64_t index) {
  return *std::find_if(ops.begin(), ops.end(),
                       [&](const v1::Op& op) { return op.rank() == rank && op.index() == index; });
}

void erase(std::vector<v1::Op>& ops, uint32_t rank, uint64_t index) {
  ops.erase(std::find_if(ops.begin(), ops.end(), [&](const v1::Op& op) {
    return op.rank() == rank && op.index() == index;
  }));
}

class ValidateTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }

  ValidationReport validate(const std::vector<v1::Op>& ops, ValidateOptions options = {},
                            uint32_t world = 4) {
    std::vector<testing::CommSpec> comms = {{"world", {0, 1, 2, 3}}};
    if (world != 4) comms = {{"world", {0, 1, 2, 3, world - 1}}};
    EXPECT_TRUE(testing::write_trace(path_, make_header(4, comms), ops).ok());
    auto report = validate_trace(path_, options);
    EXPECT_TRUE(report.ok()) << report.status().to_string();
    return report.ok() ? *report : ValidationReport{};
  }

  std::string path_ = testing::temp_trace_path("validate");
};

TEST_F(ValidateTest, AGoodTraceIsValid) {
  const ValidationReport r = validate(good_ops());
  EXPECT_TRUE(r.valid());
  EXPECT_EQ(r.issues_total, 0u);
  EXPECT_EQ(r.ops_read, 20u);
}

TEST_F(ValidateTest, ACommunicatorListingFewerRanksThanItHasIsAnIssue) {
  // Two ranks of a four-rank job seen (a log of one node): their collectives agree, but the
  // communicator cannot run with two members.
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < 2; ++r) ops.push_back(make_op(r, 0, v1::OP_KIND_ALL_REDUCE, "world", 1 << 20));
  v1::TraceHeader header = make_header(4, {{"world", {0, 1}}});
  ASSERT_TRUE(testing::write_trace(path_, header, ops).ok());
  auto whole = validate_trace(path_, {});
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_TRUE(whole->valid());  // nothing says the communicator had more members

  header.mutable_communicators(0)->set_declared_size(4);
  ASSERT_TRUE(testing::write_trace(path_, header, ops).ok());
  auto partial = validate_trace(path_, {});
  ASSERT_TRUE(partial.ok()) << partial.status().to_string();
  ASSERT_EQ(partial->issues_total, 1u);
  EXPECT_EQ(partial->issues.at(0).comm, "world");
  EXPECT_NE(partial->issues.at(0).message.find("has 4 ranks in the source but the trace lists 2"),
            std::string::npos)
      << partial->issues.at(0).message;
}

TEST_F(ValidateTest, InterleavedLayoutIsValidToo) {
  std::vector<v1::Op> ops = good_ops();
  std::stable_sort(ops.begin(), ops.end(),
                   [](const v1::Op& a, const v1::Op& b) { return a.index() < b.index(); });
  EXPECT_TRUE(validate(ops).valid());
}

TEST_F(ValidateTest, RankWithADifferentSize) {
  std::vector<v1::Op> ops = good_ops();
  find(ops, 2, 1).set_bytes(1 << 17);
  find(ops, 2, 1).set_count((1 << 17) / 2);
  const ValidationReport r = validate(ops);
  ASSERT_EQ(r.issues_total, 1u);
  const ValidationIssue& issue = r.issues.at(0);
  EXPECT_EQ(issue.comm, "world");
  EXPECT_EQ(issue.rank, 2u);
  EXPECT_EQ(issue.op_index, 1u);
  EXPECT_EQ(issue.source, "gen.log:2000002");
  EXPECT_NE(issue.message.find("131072 bytes"), std::string::npos) << issue.message;
  EXPECT_NE(issue.message.find("262144 bytes"), std::string::npos) << issue.message;
  EXPECT_NE(issue.to_string().find("comm world, rank 2, op 1 (gen.log:2000002)"), std::string::npos)
      << issue.to_string();
}

TEST_F(ValidateTest, AMissingOp) {
  std::vector<v1::Op> ops = good_ops();
  erase(ops, 3, 1);  // rank 3 never issues the all-gather
  testing::renumber(ops);
  const ValidationReport r = validate(ops);
  ASSERT_EQ(r.issues_total, 1u);
  const ValidationIssue& issue = r.issues.at(0);
  EXPECT_EQ(issue.rank, 3u);
  EXPECT_EQ(issue.op_index, 2u);  // the broadcast rank 3 issues where the others all-gather
  EXPECT_EQ(issue.source, "gen.log:3000004");
  EXPECT_NE(issue.message.find("collective #1"), std::string::npos) << issue.message;
}

TEST_F(ValidateTest, AMissingLastOpNamesTheRankAndTheOthersOp) {
  std::vector<v1::Op> ops = good_ops();
  erase(ops, 1, 4);
  const ValidationReport r = validate(ops);
  ASSERT_EQ(r.issues_total, 1u);
  const ValidationIssue& issue = r.issues.at(0);
  EXPECT_EQ(issue.rank, 1u);
  EXPECT_FALSE(issue.op_index.has_value());
  EXPECT_NE(issue.message.find("rank 1 issues only 3 collectives"), std::string::npos)
      << issue.message;
  EXPECT_NE(issue.message.find("as op 4"), std::string::npos) << issue.message;
}

TEST_F(ValidateTest, ASwappedOrder) {
  std::vector<v1::Op> ops = good_ops();
  v1::Op& a = find(ops, 1, 0);
  v1::Op& b = find(ops, 1, 1);
  std::swap(a, b);  // rank 1 all-gathers before it all-reduces; indices stay in order
  a.set_index(0);
  b.set_index(1);
  const ValidationReport r = validate(ops);
  ASSERT_EQ(r.issues_total, 1u);
  const ValidationIssue& issue = r.issues.at(0);
  EXPECT_EQ(issue.rank, 1u);
  EXPECT_EQ(issue.op_index, 0u);
  EXPECT_EQ(issue.source, "gen.log:1000002");  // the all-gather's line
  EXPECT_NE(issue.message.find("is all_gather"), std::string::npos) << issue.message;
  EXPECT_NE(issue.message.find("issues all_reduce"), std::string::npos) << issue.message;
}

TEST_F(ValidateTest, ASendWithoutItsRecv) {
  std::vector<v1::Op> ops = good_ops();
  erase(ops, 3, 2);  // rank 3 never receives rank 2's send
  testing::renumber(ops);
  const ValidationReport r = validate(ops);
  ASSERT_EQ(r.issues_total, 1u);
  const ValidationIssue& issue = r.issues.at(0);
  EXPECT_EQ(issue.rank, 2u);
  EXPECT_EQ(issue.op_index, 2u);
  EXPECT_EQ(issue.source, "gen.log:2000003");
  EXPECT_NE(issue.message.find("no matching recv"), std::string::npos) << issue.message;
}

TEST_F(ValidateTest, ARecvOfADifferentSize) {
  std::vector<v1::Op> ops = good_ops();
  find(ops, 1, 2).set_bytes(2048);
  const ValidationReport r = validate(ops);
  ASSERT_EQ(r.issues_total, 1u);
  EXPECT_EQ(r.issues.at(0).rank, 0u);  // reported at the send, naming the recv
  EXPECT_NE(r.issues.at(0).message.find("recv (rank 1 op 2, gen.log:1000003) is 2048 bytes"),
            std::string::npos)
      << r.issues.at(0).message;
}

TEST_F(ValidateTest, RecvsInSwappedOrder) {
  // Rank 0 sends 100 then 200 bytes to rank 1, which posts its recvs the other way round.
  std::vector<v1::Op> ops = {
      make_op(0, 0, v1::OP_KIND_SEND, "world", 100, 1),
      make_op(0, 1, v1::OP_KIND_SEND, "world", 200, 1),
      make_op(1, 0, v1::OP_KIND_RECV, "world", 200, 0),
      make_op(1, 1, v1::OP_KIND_RECV, "world", 100, 0),
  };
  const ValidationReport r = validate(ops);
  ASSERT_EQ(r.issues_total, 1u);
  EXPECT_EQ(r.issues[0].rank, 0u);
  EXPECT_EQ(r.issues[0].op_index, 0u);
  EXPECT_EQ(r.issues[0].source, "gen.log:1");
  EXPECT_NE(r.issues[0].message.find("send #0"), std::string::npos) << r.issues[0].message;
}

TEST_F(ValidateTest, ABadIndex) {
  std::vector<v1::Op> ops = good_ops();
  find(ops, 2, 3).set_index(7);
  const ValidationReport r = validate(ops);
  ASSERT_EQ(r.issues_total, 2u);  // 7 where 3 was due, then 4 where 8 was
  const ValidationIssue& issue = r.issues.at(0);
  EXPECT_EQ(issue.rank, 2u);
  EXPECT_EQ(issue.op_index, 7u);
  EXPECT_EQ(issue.source, "gen.log:2000004");
  EXPECT_NE(issue.message.find("rank 2's next is 3"), std::string::npos) << issue.message;
}

TEST_F(ValidateTest, UnknownCommunicatorRankAndPeer) {
  std::vector<v1::Op> ops = good_ops();
  find(ops, 0, 4).set_comm("nowhere");
  v1::Op stray = make_op(9, 0, v1::OP_KIND_ALL_REDUCE, "world", 8);
  ops.push_back(stray);
  find(ops, 0, 2).set_root(0);  // a send to itself
  const ValidationReport r = validate(ops);
  EXPECT_FALSE(r.valid());
  bool unknown_comm = false, stray_rank = false, bad_peer = false;
  for (const ValidationIssue& i : r.issues) {
    unknown_comm |= i.message.find("'nowhere' is not declared") != std::string::npos;
    stray_rank |= i.message.find("rank 9 is not in the job") != std::string::npos;
    bad_peer |= i.message.find("peer 0 is not another rank") != std::string::npos;
  }
  EXPECT_TRUE(unknown_comm);
  EXPECT_TRUE(stray_rank);
  EXPECT_TRUE(bad_peer);
}

TEST_F(ValidateTest, CommunicatorNamingARankOutsideTheJob) {
  const ValidationReport r = validate(good_ops(), {}, 6);  // "world" lists rank 5 of 4
  EXPECT_FALSE(r.valid());
  ASSERT_FALSE(r.issues.empty());
  EXPECT_EQ(r.issues[0].file_position, 0u);
  EXPECT_NE(r.issues[0].message.find("lists rank 5"), std::string::npos) << r.issues[0].message;
}

TEST_F(ValidateTest, FirstDifferenceFarIntoLongSequencesIsLocated) {
  // 3000 all-reduces per rank with checkpoints every 64 ops: the difference at #2500 sits in
  // block 39, and only that block is held in the second pass.
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < 4; ++r) {
    for (uint64_t i = 0; i < 3000; ++i) {
      ops.push_back(make_op(r, i, v1::OP_KIND_ALL_REDUCE, "world", 1024 + i % 7));
    }
  }
  find(ops, 3, 2500).set_bytes(5);
  ValidateOptions options;
  options.checkpoint_interval = 64;
  const ValidationReport r = validate(ops, options);
  ASSERT_EQ(r.issues_total, 1u);
  EXPECT_EQ(r.issues[0].rank, 3u);
  EXPECT_EQ(r.issues[0].op_index, 2500u);
  EXPECT_NE(r.issues[0].message.find("collective #2500"), std::string::npos);

  // The same with one op fewer at the very end of one rank: a partial last block.
  ops = {};
  for (uint32_t r = 0; r < 4; ++r) {
    for (uint64_t i = 0; i < (r == 2 ? 2999u : 3000u); ++i) {
      ops.push_back(make_op(r, i, v1::OP_KIND_ALL_REDUCE, "world", 1024));
    }
  }
  const ValidationReport tail = validate(ops, options);
  ASSERT_EQ(tail.issues_total, 1u);
  EXPECT_EQ(tail.issues[0].rank, 2u);
  EXPECT_NE(tail.issues[0].message.find("lacks #2999"), std::string::npos)
      << tail.issues[0].message;
}

TEST_F(ValidateTest, ManyMismatchesAreAllCountedAndTheFirstReported) {
  std::vector<v1::Op> ops = good_ops();
  find(ops, 1, 0).set_bytes(1);
  find(ops, 2, 4).set_bytes(2);
  find(ops, 3, 3).set_root(2);
  ValidateOptions options;
  options.max_reported = 2;
  const ValidationReport r = validate(ops, options);
  EXPECT_EQ(r.issues_total, 3u);
  ASSERT_EQ(r.issues.size(), 2u);
  EXPECT_EQ(r.issues[0].rank, 1u);  // file order: rank 1's ops come before rank 2's
  EXPECT_EQ(r.issues[1].rank, 2u);
}

TEST(ValidateFiles, UnreadableAndDamagedFilesAreErrorsNamingTheFile) {
  const std::string missing = testing::temp_trace_path("missing");
  auto r = validate_trace(missing, {});
  ASSERT_THAT(r, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(r.status().message().find(missing), std::string::npos);

  const std::string truncated = testing::temp_trace_path("truncated");
  ASSERT_TRUE(
      testing::write_trace(truncated, make_header(4, {{"world", {0, 1, 2, 3}}}), good_ops()).ok());
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) - 3);
  r = validate_trace(truncated, {});
  ASSERT_THAT(r, StatusIs(StatusCode::kDataLoss));
  EXPECT_NE(r.status().message().find(truncated), std::string::npos);
  std::filesystem::remove(truncated);

  EXPECT_THAT(validate_trace("-", {}), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::traces::analysis
