#include "replayer/collectives/plan_summary.h"

#include <gtest/gtest.h>

#include "replayer/collectives/expander.h"

namespace collide::replayer::collectives {
namespace {

// 8 ranks on 2 hosts of 4 NICs, ring all-reduce of 8 KiB on one channel: the ring crosses host
// 0 -> 1 at rank 3 and host 1 -> 0 at rank 7, each sending 2(n-1) chunks of S/n. Accounts every
// rank's expansion and returns its lines.
std::vector<OpPlan> plan_ring(PlanSummary& summary, bool pxn) {
  v1::TraceHeader h;
  auto* comm = h.add_communicators();
  comm->set_id("world");
  for (uint32_t r = 0; r < 8; ++r) comm->add_ranks(r);
  const Placement placement = *Placement::uniform(8, 4, 4);
  ExpandOptions options;
  options.channels = 1;
  options.pxn = pxn;
  auto expander = Expander::create(h, placement, options);
  EXPECT_TRUE(expander.ok());
  std::vector<OpPlan> lines;
  for (uint32_t r = 0; r < 8 && expander.ok(); ++r) {
    v1::Op op;
    op.set_rank(r);
    op.set_kind(v1::OP_KIND_ALL_REDUCE);
    op.set_comm("world");
    op.set_bytes(8192);
    lines.push_back(summary.add(op, 8, *expander->expand(op), placement));
  }
  return lines;
}

TEST(PlanSummaryTest, AccountsRanksAndHostPairs) {
  PlanSummary summary(8);
  const std::vector<OpPlan> lines = plan_ring(summary, false);
  ASSERT_EQ(lines.size(), 8u);
  for (uint32_t r = 0; r < 8; ++r) {
    const OpPlan& line = lines[r];
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

TEST(PlanSummaryTest, CountsWhatPxnRelays) {
  // The same ring with PXN (NCCL's default): rank 3 (host 0, NIC 3) hands what it sends to rank
  // 4 (host 1, NIC 0) to rank 0, the NIC 0 of host 0, over NVLink; rank 0 sends it; the same for
  // 7 -> 0 via 4.
  ASSERT_TRUE(ExpandOptions{}.pxn);
  PlanSummary summary(8);
  const std::vector<OpPlan> lines = plan_ring(summary, true);
  ASSERT_EQ(lines.size(), 8u);
  const uint64_t crossing = 2u * 7 * 1024;
  for (uint32_t r = 0; r < 8; ++r) {
    const OpPlan& line = lines[r];
    const bool relay = r == 0 || r == 4;
    EXPECT_EQ(line.network_sent, relay ? crossing : 0u) << r;
    EXPECT_EQ(line.pxn_relayed, relay ? crossing : 0u) << r;
    // Every rank sends its ring share once over NVLink: 3 and 7 to their relay, the rest to their
    // ring neighbour.
    EXPECT_EQ(line.local_sent, crossing) << r;
  }
  EXPECT_EQ(summary.total_network_bytes(), 2 * crossing);
  EXPECT_EQ(summary.total_pxn_relayed_bytes(), 2 * crossing);
  EXPECT_EQ(summary.host_pairs().at({0, 1}), crossing);
  EXPECT_EQ(summary.host_pairs().at({1, 0}), crossing);
  EXPECT_EQ(summary.ranks()[4].network_received, crossing);  // from rank 0, for rank 3
  EXPECT_EQ(summary.ranks()[0].pxn_relayed, crossing);
}

}  // namespace
}  // namespace collide::replayer::collectives
