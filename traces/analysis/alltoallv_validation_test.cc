// `collide trace validate` on all-to-allv sizes across ranks: what rank a sends to b must be what
// b expects from a.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "traces/analysis/test_traces.h"
#include "traces/analysis/trace_validator.h"

namespace collide::traces::analysis {
namespace {

using testing::make_header;
using testing::make_op;

// The size rank `from` sends to rank `to` in all-to-allv `k`: distinct for every entry, so a
// transposed or shifted matrix does not pass by accident.
uint64_t size_of(uint64_t k, uint32_t from, uint32_t to) {
  return 1000 * (k + 1) + 37 * from + to * to + 1;
}

// `instances` all-to-allvs over all `n` ranks, written rank by rank; with receive sizes unless
// `with_receives` is false.
std::vector<v1::Op> alltoallv_ops(uint32_t n, uint64_t instances, bool with_receives = true) {
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < n; ++r) {
    for (uint64_t k = 0; k < instances; ++k) {
      v1::Op op = make_op(r, k, v1::OP_KIND_ALL_TO_ALLV, "ep", 0);
      for (uint32_t peer = 0; peer < n; ++peer) {
        op.add_peer_bytes(size_of(k, r, peer));
        if (with_receives) op.add_peer_recv_bytes(size_of(k, peer, r));
      }
      ops.push_back(op);
    }
  }
  return ops;
}

v1::Op& op_of(std::vector<v1::Op>& ops, uint32_t rank, uint64_t index) {
  for (v1::Op& op : ops) {
    if (op.rank() == rank && op.index() == index) return op;
  }
  ADD_FAILURE() << "no op " << index << " of rank " << rank;
  return ops.front();
}

class AllToAllvValidation : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }

  ValidationReport validate(uint32_t n, const std::vector<v1::Op>& ops) {
    std::vector<uint32_t> ranks;
    for (uint32_t r = 0; r < n; ++r) ranks.push_back(r);
    EXPECT_TRUE(testing::write_trace(path_, make_header(n, {{"ep", ranks}}), ops).ok());
    auto report = validate_trace(path_, {});
    EXPECT_TRUE(report.ok()) << report.status().to_string();
    return report.ok() ? *report : ValidationReport{};
  }

  std::string path_ = testing::temp_trace_path("alltoallv");
};

TEST_F(AllToAllvValidation, MatchingSizesAreValid) {
  const ValidationReport r = validate(4, alltoallv_ops(4, 5));
  EXPECT_TRUE(r.valid()) << (r.issues.empty() ? "" : r.issues[0].to_string());
  EXPECT_EQ(r.ops_read, 20u);
}

TEST_F(AllToAllvValidation, AReceiverExpectingADifferentSizeIsNamed) {
  std::vector<v1::Op> ops = alltoallv_ops(4, 5);
  // In all-to-allv #3, rank 2 expects 5 bytes from rank 1; rank 1 sends size_of(3, 1, 2).
  op_of(ops, 2, 3).set_peer_recv_bytes(1, 5);
  const ValidationReport r = validate(4, ops);
  ASSERT_EQ(r.issues_total, 1u);
  const ValidationIssue& issue = r.issues.at(0);
  EXPECT_EQ(issue.rank, 1u);  // at the sender's op, naming the receiver's
  EXPECT_EQ(issue.op_index, 3u);
  EXPECT_EQ(issue.comm, "ep");
  const std::string expected =
      "all_to_allv #3 on communicator 'ep': rank 1 sends " + std::to_string(size_of(3, 1, 2)) +
      " bytes to rank 2, but rank 2 (op 3, gen.log:2000004) expects 5 bytes from rank 1";
  EXPECT_EQ(issue.message, expected);
}

TEST_F(AllToAllvValidation, ASenderSendingADifferentSizeIsNamed) {
  std::vector<v1::Op> ops = alltoallv_ops(4, 5);
  op_of(ops, 3, 0).set_peer_bytes(0, 1);  // rank 3 sends 1 byte to rank 0 in #0
  const ValidationReport r = validate(4, ops);
  ASSERT_EQ(r.issues_total, 1u);
  EXPECT_EQ(r.issues.at(0).rank, 3u);
  EXPECT_NE(r.issues.at(0).message.find("rank 3 sends 1 bytes to rank 0, but rank 0 (op 0"),
            std::string::npos)
      << r.issues.at(0).message;
}

TEST_F(AllToAllvValidation, SwappedInstancesOfOneRankDiffer) {
  // Rank 1 issues #1's sizes first and #0's second: each size appears somewhere, but not in the
  // instance its peers expect it in.
  std::vector<v1::Op> ops = alltoallv_ops(4, 2);
  v1::Op& a = op_of(ops, 1, 0);
  v1::Op& b = op_of(ops, 1, 1);
  a.mutable_peer_bytes()->Swap(b.mutable_peer_bytes());
  a.mutable_peer_recv_bytes()->Swap(b.mutable_peer_recv_bytes());
  const ValidationReport r = validate(4, ops);
  EXPECT_FALSE(r.valid());
  ASSERT_FALSE(r.issues.empty());
  EXPECT_NE(r.issues[0].message.find("all_to_allv #0"), std::string::npos)
      << r.issues[0].to_string();
}

TEST_F(AllToAllvValidation, SendSizesAloneAreNotCompared) {
  // Sources that give only what each rank sends: nothing to hold the sizes against.
  const ValidationReport r = validate(4, alltoallv_ops(4, 3, /*with_receives=*/false));
  EXPECT_TRUE(r.valid()) << (r.issues.empty() ? "" : r.issues[0].to_string());
}

TEST_F(AllToAllvValidation, SizesNotOnePerRankAreAnIssue) {
  std::vector<v1::Op> ops = alltoallv_ops(4, 2);
  for (v1::Op& op : ops) {
    if (op.index() == 1) op.mutable_peer_recv_bytes()->RemoveLast();  // every rank: agree
  }
  const ValidationReport r = validate(4, ops);
  EXPECT_EQ(r.issues_total, 4u);
  EXPECT_NE(r.issues.at(0).message.find("4 send and 3 receive sizes"), std::string::npos)
      << r.issues.at(0).message;
}

TEST_F(AllToAllvValidation, LargeCommunicatorLocatesTheInstance) {
  // 520 ranks: more (sender, receiver) pairs than one block holds, so each all-to-allv is a block
  // of its own; the difference is in the third.
  constexpr uint32_t kN = 520;
  std::vector<v1::Op> ops = alltoallv_ops(kN, 3);
  op_of(ops, 400, 2).set_peer_recv_bytes(7, 9);
  const ValidationReport r = validate(kN, ops);
  ASSERT_EQ(r.issues_total, 1u);
  EXPECT_EQ(r.issues.at(0).rank, 7u);
  EXPECT_NE(r.issues.at(0).message.find("all_to_allv #2 on communicator 'ep': rank 7 sends"),
            std::string::npos)
      << r.issues.at(0).message;
  EXPECT_NE(r.issues.at(0).message.find("expects 9 bytes from rank 7"), std::string::npos);
}

}  // namespace
}  // namespace collide::traces::analysis
