#include "replayer/collectives/plan_summary.h"

#include <gtest/gtest.h>

#include "replayer/collectives/expander.h"

namespace collide::replayer::collectives {
namespace {

TEST(PlanSummaryTest, AccountsRanksAndHostPairs) {
  // 8 ranks on 2 hosts, ring all-reduce of 8 KiB on one channel: the ring crosses host 0 -> 1 at
  // rank 3 and host 1 -> 0 at rank 7, each sending 2(n-1) chunks of S/n over the network.
  v1::TraceHeader h;
  auto* comm = h.add_communicators();
  comm->set_id("world");
  for (uint32_t r = 0; r < 8; ++r) comm->add_ranks(r);
  const Placement placement = *Placement::uniform(8, 4, 4);
  ExpandOptions options;
  options.channels = 1;
  auto expander = Expander::create(h, placement, options);
  ASSERT_TRUE(expander.ok());
  PlanSummary summary(8);
  for (uint32_t r = 0; r < 8; ++r) {
    v1::Op op;
    op.set_rank(r);
    op.set_kind(v1::OP_KIND_ALL_REDUCE);
    op.set_comm("world");
    op.set_bytes(8192);
    const OpPlan line = summary.add(op, 8, *expander->expand(op), placement);
    EXPECT_EQ(line.steps, 2u * 2 * 7);
    EXPECT_DOUBLE_EQ(line.busbw_factor, 2.0 * 7 / 8);
    EXPECT_EQ(line.network_sent + line.local_sent, 2u * 7 * 1024);
    EXPECT_EQ(line.network_sent, r == 3 || r == 7 ? 2u * 7 * 1024 : 0u);
  }
  EXPECT_EQ(summary.total_network_bytes(), 2u * 2 * 7 * 1024);
  ASSERT_EQ(summary.host_pairs().size(), 2u);
  EXPECT_EQ(summary.host_pairs().at({0, 1}), 2u * 7 * 1024);
  EXPECT_EQ(summary.host_pairs().at({1, 0}), 2u * 7 * 1024);
  EXPECT_EQ(summary.ranks()[4].network_received, 2u * 7 * 1024);  // from rank 3
  EXPECT_EQ(summary.ranks()[5].network_received, 0u);
}

}  // namespace
}  // namespace collide::replayer::collectives
