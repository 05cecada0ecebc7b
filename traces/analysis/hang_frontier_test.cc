#include "traces/analysis/hang_frontier.h"

#include <gtest/gtest.h>

namespace collide::traces::analysis {
namespace {

v1::TraceHeader header_of(std::vector<uint32_t> members, std::vector<uint32_t> recorded) {
  v1::TraceHeader header;
  v1::Communicator* c = header.add_communicators();
  c->set_id("dp");
  c->set_name("data parallel");
  for (uint32_t r : members) c->add_ranks(r);
  for (uint32_t r : recorded) header.add_ranks()->set_rank(r);
  return header;
}

v1::Op op(uint32_t rank, uint64_t seq, v1::OpState state, v1::OpKind kind = v1::OP_KIND_ALL_REDUCE) {
  v1::Op o;
  o.set_rank(rank);
  o.set_comm("dp");
  o.set_kind(kind);
  o.set_op_count(seq);
  o.set_bytes(64);
  o.set_state(state);
  return o;
}

TEST(HangFrontier, OpsWithoutStatesHaveNoFrontier) {
  HangFrontierAccumulator acc(header_of({0, 1}, {}));
  acc.add(op(0, 1, v1::OP_STATE_UNSPECIFIED));
  const HangFrontier f = std::move(acc).finish();
  EXPECT_FALSE(f.has_states);
  EXPECT_FALSE(f.hung());
  EXPECT_EQ(frontier_table(f), "");
}

TEST(HangFrontier, AllCompletedIsNoHang) {
  HangFrontierAccumulator acc(header_of({0, 1}, {0, 1}));
  for (uint32_t r : {0u, 1u}) acc.add(op(r, 1, v1::OP_STATE_COMPLETED));
  const HangFrontier f = std::move(acc).finish();
  EXPECT_TRUE(f.has_states);
  EXPECT_FALSE(f.hung());
}

// Rank 1's record starts after collective 5 (its ring buffer moved on): 5 counts as completed
// there. Rank 2 stopped at 4, rank 3 left no dump, rank 0 started 5 and scheduled 6.
TEST(HangFrontier, SortsMembersAtTheFirstCollectiveNotAllCompleted) {
  HangFrontierAccumulator acc(header_of({0, 1, 2, 3}, {0, 1, 2}));
  for (uint64_t s = 3; s <= 4; ++s) acc.add(op(0, s, v1::OP_STATE_COMPLETED));
  acc.add(op(0, 5, v1::OP_STATE_STARTED));
  acc.add(op(0, 6, v1::OP_STATE_SCHEDULED));
  acc.add(op(1, 6, v1::OP_STATE_STARTED));
  for (uint64_t s = 2; s <= 4; ++s) acc.add(op(2, s, v1::OP_STATE_COMPLETED));
  v1::Op send = op(1, 2, v1::OP_STATE_SCHEDULED, v1::OP_KIND_SEND);
  send.set_root(3);
  acc.add(send);
  const HangFrontier f = std::move(acc).finish();
  ASSERT_EQ(f.collectives.size(), 1u);
  const FrontierCollective& c = f.collectives[0];
  EXPECT_EQ(c.seq, 5u);
  EXPECT_EQ(c.started, (std::vector<uint32_t>{0}));
  EXPECT_EQ(c.completed, (std::vector<uint32_t>{1}));
  EXPECT_EQ(c.not_issued, (std::vector<uint32_t>{2}));
  EXPECT_EQ(c.no_record, (std::vector<uint32_t>{3}));
  EXPECT_TRUE(c.scheduled.empty());
  ASSERT_EQ(f.point_to_point.size(), 1u);
  EXPECT_EQ(f.point_to_point[0].rank, 1u);
  EXPECT_EQ(describe(f.point_to_point[0]), "rank 1: send #2 with comm rank 3 of comm dp only scheduled");
}

}  // namespace
}  // namespace collide::traces::analysis
