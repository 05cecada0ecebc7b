#include "orchestrator/scenario/incast_workload.h"

#include <map>

#include <gtest/gtest.h>

namespace collide::orchestrator {
namespace {

v1::Incast incast(uint32_t senders, uint64_t bytes = 1 << 20, uint32_t count = 0, uint32_t receiver = 0) {
  v1::Incast i;
  i.set_senders(senders);
  i.set_bytes(bytes);
  i.set_count(count);
  i.set_receiver(receiver);
  return i;
}

TEST(IncastWorkloadTest, SendersFromOtherHostsComeFirst) {
  // 4 hosts x 2 ranks: the receiver's host-mate (rank 1) is the last chosen.
  EXPECT_EQ(incast_senders(incast(3), 8, 2), (std::vector<uint32_t>{2, 3, 4}));
  EXPECT_EQ(incast_senders(incast(7), 8, 2), (std::vector<uint32_t>{2, 3, 4, 5, 6, 7, 1}));
  // Another receiver: the ranks after it first, wrapping round.
  EXPECT_EQ(incast_senders(incast(4, 1, 0, 5), 8, 2), (std::vector<uint32_t>{6, 7, 0, 1}));
}

TEST(IncastWorkloadTest, EachSenderSendsToTheReceiverWhichReceivesFromAllInOneGroup) {
  const auto ops = incast_ops(incast(3, 0, 2), 8, 2, 4096, 2);
  std::map<uint32_t, std::vector<v1::Op>> by_rank;
  for (const v1::Op& op : ops) by_rank[op.rank()].push_back(op);
  ASSERT_EQ(by_rank.size(), 4u) << "the receiver and 3 senders; other ranks have nothing to do";
  // The receiver: per iteration 2 incasts, each 3 receives in one group of its own.
  const auto& recv = by_rank.at(0);
  ASSERT_EQ(recv.size(), 2u * 2 * 3);
  for (size_t i = 0; i < recv.size(); ++i) {
    EXPECT_EQ(recv[i].kind(), v1::OP_KIND_RECV);
    EXPECT_EQ(recv[i].index(), i);
    EXPECT_EQ(recv[i].group(), i / 3 + 1);
    EXPECT_EQ(recv[i].iteration(), i / 6);
    EXPECT_EQ(recv[i].bytes(), 4096u);
    EXPECT_EQ(recv[i].count(), 2048u);
    EXPECT_EQ(recv[i].comm(), "world");
  }
  EXPECT_EQ(recv[0].root(), 2);
  EXPECT_EQ(recv[1].root(), 3);
  EXPECT_EQ(recv[2].root(), 4);
  for (uint32_t sender : {2u, 3u, 4u}) {
    const auto& send = by_rank.at(sender);
    ASSERT_EQ(send.size(), 4u);
    for (size_t i = 0; i < send.size(); ++i) {
      EXPECT_EQ(send[i].kind(), v1::OP_KIND_SEND);
      EXPECT_EQ(send[i].root(), 0);
      EXPECT_EQ(send[i].index(), i);
      EXPECT_EQ(send[i].bytes(), 4096u);
    }
  }
  // Rank by rank, as a trace is written.
  for (size_t i = 1; i < ops.size(); ++i) EXPECT_LE(ops[i - 1].rank(), ops[i].rank());
}

TEST(IncastWorkloadTest, RefusesTooFewRanksAndSendersOutOfRange) {
  EXPECT_FALSE(incast_problem(incast(3), 4).has_value());
  const auto few = incast_problem(incast(4), 4);
  ASSERT_TRUE(few.has_value());
  EXPECT_EQ(few->field, "workload.incast.senders");
  EXPECT_EQ(few->what, "4 senders and a receiver need 5 ranks, but the job has 4");
  EXPECT_EQ(incast_problem(incast(1), 8)->field, "workload.incast.senders");
  EXPECT_EQ(incast_problem(incast(33), 64)->what, "33 is not in 2..32");
  EXPECT_FALSE(incast_problem(incast(32), 33).has_value());
  EXPECT_EQ(incast_problem(incast(2, 0), 8)->field, "workload.incast.bytes");
  EXPECT_EQ(incast_problem(incast(2, 1, 0, 8), 8)->field, "workload.incast.receiver");
  EXPECT_EQ(check_incast(incast(4), 4).message(),
            "workload.incast.senders: 4 senders and a receiver need 5 ranks, but the job has 4");
}

}  // namespace
}  // namespace collide::orchestrator
