#include "replayer/collectives/channel_lanes.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <numeric>

#include "replayer/collectives/expander.h"
#include "replayer/collectives/instant_execution.h"
#include "tests/support/status_matchers.h"
#include "traces/op_types.h"

namespace collide::replayer::collectives {
namespace {

// Every rank's expansion of one op of `kind` over `n` ranks, `ranks_per_host` to a host (one NIC
// per rank, so PXN relays where it may).
std::vector<ExpandedOp> expand_everywhere(v1::OpKind kind, uint32_t n, uint32_t ranks_per_host,
                                          const ExpandOptions& options) {
  v1::TraceHeader header;
  header.set_world_size(n);
  auto* comm = header.add_communicators();
  comm->set_id("c");
  for (uint32_t r = 0; r < n; ++r) comm->add_ranks(r);
  auto placement = Placement::uniform(n, ranks_per_host, ranks_per_host);
  EXPECT_TRUE(placement.ok());
  auto expander = Expander::create(header, *placement, options);
  EXPECT_TRUE(expander.ok()) << expander.status().to_string();
  std::vector<ExpandedOp> out;
  for (uint32_t r = 0; r < n; ++r) {
    v1::Op op;
    op.set_rank(r);
    op.set_kind(kind);
    op.set_comm("c");
    op.set_bytes(3 << 20);
    op.set_root(1);
    if (kind == v1::OP_KIND_SEND || kind == v1::OP_KIND_RECV) {
      if (r > 1) continue;
      op.set_kind(r == 0 ? v1::OP_KIND_SEND : v1::OP_KIND_RECV);
      op.set_root(r == 0 ? 1 : 0);
    }
    auto e = expander->expand(op);
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    if (e.ok()) out.push_back(std::move(e).value());
  }
  return out;
}

// Split over lanes, every rank's share of a lane meets its peers' shares of the same lane: each
// lane runs to completion by itself, and the lanes together carry what the whole op carries.
TEST(ChannelLanesTest, EachLaneOfEveryKindRunsByItselfAndTheLanesAddUpToTheOp) {
  const v1::OpKind kinds[] = {v1::OP_KIND_ALL_REDUCE, v1::OP_KIND_ALL_GATHER,
                              v1::OP_KIND_REDUCE_SCATTER, v1::OP_KIND_ALL_TO_ALL,
                              v1::OP_KIND_BROADCAST, v1::OP_KIND_REDUCE, v1::OP_KIND_SEND};
  for (v1::OpKind kind : kinds) {
    for (bool tree : {false, true}) {
      for (bool pxn : {false, true}) {
        ExpandOptions options;
        options.channels = 9;
        options.slice_bytes = 128 * 1024;
        options.qps_per_connection = 2;
        options.all_reduce = tree ? AllReduceAlgorithm::kTree : AllReduceAlgorithm::kRing;
        options.pxn = pxn;
        SCOPED_TRACE(fmt::format("{} tree={} pxn={}", traces::op_kind_name(kind), tree, pxn));
        const std::vector<ExpandedOp> whole = expand_everywhere(kind, 8, 4, options);
        auto all = execute_instantly(whole);
        ASSERT_TRUE(all.ok()) << all.status().to_string();
        for (auto [lanes, nics] : {std::pair{2u, 1u}, std::pair{3u, 1u}, std::pair{2u, 4u}}) {
          uint64_t steps = 0;
          uint64_t bytes = 0;
          for (uint32_t lane = 0; lane < lanes; ++lane) {
            std::vector<ExpandedOp> share = whole;
            for (ExpandedOp& op : share) {
              ASSERT_TRUE(keep_lane(op, lane, lanes, nics).ok());
              for (const Step& s : op.steps) {
                ASSERT_EQ(s.tag.channel / nics % lanes, lane);
                ASSERT_LT(s.id, op.steps.size());
              }
            }
            auto part = execute_instantly(share);
            ASSERT_TRUE(part.ok()) << "lane " << lane << " of " << lanes << ": "
                                   << part.status().to_string();
            steps += part->steps;
            bytes += part->bytes_delivered;
          }
          EXPECT_EQ(steps, all->steps) << lanes << " lanes";
          EXPECT_EQ(bytes, all->bytes_delivered) << lanes << " lanes";
        }
      }
    }
  }
}

TEST(ChannelLanesTest, OneLaneKeepsEverything) {
  ExpandOptions options;
  options.channels = 3;
  std::vector<ExpandedOp> ops = expand_everywhere(v1::OP_KIND_ALL_REDUCE, 4, 1, options);
  const size_t before = ops[0].steps.size();
  ASSERT_TRUE(keep_lane(ops[0], 0, 1, 1).ok());
  EXPECT_EQ(ops[0].steps.size(), before);
}

// A step that waits for a step of another channel cannot be split off: said, not mangled.
TEST(ChannelLanesTest, ADependencyAcrossLanesIsAnError) {
  ExpandedOp op;
  op.rank = 3;
  op.op_index = 7;
  Step a;
  a.id = 0;
  a.tag.channel = 0;
  Step b;
  b.id = 1;
  b.tag.channel = 1;
  b.deps.push_back(0);
  op.steps = {a, b};
  Status s = keep_lane(op, 1, 2, 1);
  ASSERT_THAT(s, StatusIs(StatusCode::kInternal));
  EXPECT_NE(s.message().find("waits for step 0 of another channel"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace collide::replayer::collectives
