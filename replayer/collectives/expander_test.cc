#include "replayer/collectives/expander.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "replayer/collectives/accounting.h"
#include "replayer/collectives/instant_execution.h"
#include "tests/support/status_matchers.h"
#include "traces/op_types.h"

namespace collide::replayer::collectives {
namespace {

struct Case {
  v1::OpKind kind;
  uint32_t n;
  uint64_t bytes;
  int32_t root;
  uint32_t ranks_per_host;
  ExpandOptions options;
  bool shuffled_members;
  uint32_t seed;
};

std::string describe(const Case& c) {
  return fmt::format("{} n={} bytes={} root={} ranks/host={} channels={} slice={} qps={} tree={} "
                     "pxn={} shuffled={} seed={}",
                     traces::op_kind_name(c.kind), c.n, c.bytes, c.root, c.ranks_per_host,
                     c.options.channels, c.options.slice_bytes, c.options.qps_per_connection,
                     c.options.all_reduce == AllReduceAlgorithm::kTree, c.options.pxn,
                     c.shuffled_members, c.seed);
}

v1::TraceHeader header_for(const Case& c, std::mt19937& rng) {
  v1::TraceHeader h;
  h.set_world_size(c.n);
  auto* comm = h.add_communicators();
  comm->set_id("c");
  std::vector<uint32_t> members(c.n);
  std::iota(members.begin(), members.end(), 0);
  if (c.shuffled_members) std::shuffle(members.begin(), members.end(), rng);
  for (uint32_t r : members) comm->add_ranks(r);
  return h;
}

v1::Op op_for(const Case& c, uint32_t rank, v1::OpKind kind) {
  v1::Op op;
  op.set_rank(rank);
  op.set_kind(kind);
  op.set_comm("c");
  op.set_bytes(c.bytes);
  op.set_root(c.root);
  return op;
}

// Expands one op on every rank (for send/recv: a send from comm rank 0 to the root's rank and the
// matching receive), checks the plan runs to completion and returns what was sent. PXN's NVLink
// hops to a relay (sends the op itself does not make) are summed into `relay_hop_bytes`.
ExecutionSummary expand_all(const Case& c, uint64_t* relay_hop_bytes = nullptr) {
  std::mt19937 rng(c.seed);
  const v1::TraceHeader header = header_for(c, rng);
  auto placement = Placement::uniform(c.n, c.ranks_per_host, c.ranks_per_host);
  EXPECT_TRUE(placement.ok());
  auto expander = Expander::create(header, *placement, c.options);
  EXPECT_TRUE(expander.ok()) << expander.status().to_string();
  std::vector<ExpandedOp> expanded;
  auto add = [&](const v1::Op& op) {
    auto e = expander->expand(op);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    expanded.push_back(std::move(e).value());
  };
  const auto& members = header.communicators(0).ranks();
  if (c.kind == v1::OP_KIND_SEND) {
    v1::Op send = op_for(c, members[0], v1::OP_KIND_SEND);
    v1::Op recv = op_for(c, members[c.root], v1::OP_KIND_RECV);
    recv.set_root(0);
    add(send);
    add(recv);
  } else {
    for (uint32_t r = 0; r < c.n; ++r) add(op_for(c, r, c.kind));
  }
  auto summary = execute_instantly(expanded);
  EXPECT_TRUE(summary.ok()) << summary.status().to_string() << "\n" << describe(c);
  uint64_t sent = 0;
  for (const ExpandedOp& e : expanded) {
    for (const Step& s : e.steps) {
      if (s.kind == StepKind::kSend) sent += s.bytes;
      if (s.kind == StepKind::kSend && s.tag.relay_to != 0 && relay_hop_bytes != nullptr) {
        *relay_hop_bytes += s.bytes;
      }
      EXPECT_LT(s.qp, c.options.qps_per_connection);
      EXPECT_EQ(s.local, e.rank / c.ranks_per_host == s.peer / c.ranks_per_host);
    }
  }
  EXPECT_EQ(summary.ok() ? summary->bytes_delivered : 0, sent);
  return summary.ok() ? *summary : ExecutionSummary{};
}

Case random_case(std::mt19937& rng, uint32_t seed) {
  static const v1::OpKind kKinds[] = {
      v1::OP_KIND_ALL_REDUCE, v1::OP_KIND_ALL_GATHER, v1::OP_KIND_REDUCE_SCATTER,
      v1::OP_KIND_ALL_TO_ALL, v1::OP_KIND_BROADCAST,  v1::OP_KIND_REDUCE,
      v1::OP_KIND_GATHER,     v1::OP_KIND_SCATTER,    v1::OP_KIND_SEND,
      v1::OP_KIND_BARRIER};
  static const uint64_t kSlices[] = {7777, 65536, 512 * 1024};
  static const uint32_t kRanksPerHost[] = {1, 2, 4, 8};
  Case c;
  c.seed = seed;
  c.kind = kKinds[rng() % std::size(kKinds)];
  c.n = 1 + rng() % 24;
  if (c.kind == v1::OP_KIND_SEND && c.n < 2) c.n = 2;
  // Mostly large buffers, sometimes smaller than the rank count (zero-byte chunks).
  c.bytes = rng() % 4 == 0 ? rng() % 40 : rng() % (1 << 20);
  c.root = static_cast<int32_t>(rng() % c.n);
  if (c.kind == v1::OP_KIND_SEND && c.root == 0) c.root = 1;
  c.ranks_per_host = kRanksPerHost[rng() % std::size(kRanksPerHost)];
  c.options.channels = 1 + rng() % 4;
  c.options.slice_bytes = kSlices[rng() % std::size(kSlices)];
  c.options.qps_per_connection = 1 + rng() % 4;
  c.options.all_reduce = rng() % 2 ? AllReduceAlgorithm::kTree : AllReduceAlgorithm::kRing;
  c.shuffled_members = rng() % 2;
  c.options.pxn = rng() % 2;
  return c;
}

TEST(ExpanderTest, EveryKindSendsItsClosedFormBytesAndCompletes) {
  std::mt19937 rng(20261122);
  for (uint32_t i = 0; i < 600; ++i) {
    const Case c = random_case(rng, i);
    SCOPED_TRACE(describe(c));
    uint64_t relay_hops = 0;
    const ExecutionSummary s = expand_all(c, &relay_hops);
    const uint64_t expected =
        c.bytes == 0 && c.kind != v1::OP_KIND_BARRIER ? 0 : total_sent_bytes(c.kind, c.n, c.bytes);
    // PXN adds an NVLink hop to relayed transfers and nothing else.
    ASSERT_EQ(s.bytes_delivered - relay_hops, expected);
    if (!c.options.pxn) {
      ASSERT_EQ(relay_hops, 0u);
    }
  }
}

TEST(ExpanderTest, RingAllReduceCrossesHostsOnlyAtBoundaries) {
  // 16 ranks on 2 hosts, a buffer that divides evenly: only the 2 ranks whose ring neighbour sits
  // on the other host send over the network, each 2(n-1) chunks of S/n.
  Case c{v1::OP_KIND_ALL_REDUCE, 16, 16 * 2 * 1024, -1, 8, {}, true, 1};
  c.options.channels = 2;
  c.options.pxn = false;  // no NVLink hops to count (PxnTest counts them)
  const ExecutionSummary s = expand_all(c);
  const uint64_t chunk = c.bytes / c.options.channels / c.n;
  EXPECT_EQ(s.network_bytes, 2 * c.options.channels * 2 * (c.n - 1) * chunk);
  EXPECT_EQ(s.bytes_delivered, 2 * (c.n - 1) * c.bytes);
  // Ring pipelining: 2(n-1) dependent steps.
  EXPECT_EQ(s.rounds, 2 * (c.n - 1));
}

TEST(ExpanderTest, TreeAllReduceIsShallowerThanRing) {
  Case c{v1::OP_KIND_ALL_REDUCE, 64, 1 << 20, -1, 8, {}, false, 2};
  c.options.pxn = false;  // the two algorithms relay different transfers
  c.options.all_reduce = AllReduceAlgorithm::kTree;
  c.options.slice_bytes = 1 << 20;
  const ExecutionSummary tree = expand_all(c);
  c.options.all_reduce = AllReduceAlgorithm::kRing;
  const ExecutionSummary ring = expand_all(c);
  EXPECT_EQ(tree.bytes_delivered, ring.bytes_delivered);
  EXPECT_LT(tree.rounds, ring.rounds / 4);  // about 2 log2(n) against 2(n-1)
}

TEST(ExpanderTest, SlicesSpreadOverQueuePairs) {
  Case c{v1::OP_KIND_ALL_GATHER, 4, 8 << 20, -1, 1, {}, false, 3};
  c.options.channels = 1;
  c.options.slice_bytes = 1 << 20;
  c.options.qps_per_connection = 4;
  auto placement = Placement::uniform(4, 1, 1);
  std::mt19937 rng(1);
  auto expander = Expander::create(header_for(c, rng), *placement, c.options);
  ASSERT_TRUE(expander.ok());
  auto e = expander->expand(op_for(c, 0, c.kind));
  ASSERT_TRUE(e.ok());
  std::vector<int> per_qp(4, 0);
  for (const Step& s : e->steps) per_qp[s.qp]++;
  // 3 steps x 2 directions x 8 slices, spread evenly over 4 QPs.
  EXPECT_EQ(per_qp, (std::vector<int>{12, 12, 12, 12}));
}

TEST(ExpanderTest, SameInputsGiveSameSteps) {
  std::mt19937 rng(5);
  Case c = random_case(rng, 5);
  c.kind = v1::OP_KIND_ALL_REDUCE;
  auto placement = Placement::uniform(c.n, c.ranks_per_host, 1);
  std::mt19937 r1(9), r2(9);
  auto a = Expander::create(header_for(c, r1), *placement, c.options);
  auto b = Expander::create(header_for(c, r2), *placement, c.options);
  auto ea = a->expand(op_for(c, 0, c.kind));
  auto eb = b->expand(op_for(c, 0, c.kind));
  ASSERT_EQ(ea->steps.size(), eb->steps.size());
  for (size_t i = 0; i < ea->steps.size(); ++i) {
    EXPECT_EQ(ea->steps[i].tag, eb->steps[i].tag);
    EXPECT_EQ(ea->steps[i].peer, eb->steps[i].peer);
    EXPECT_EQ(ea->steps[i].bytes, eb->steps[i].bytes);
    EXPECT_EQ(ea->steps[i].deps, eb->steps[i].deps);
  }
}

TEST(ExpanderTest, AllToAllvReceivesWhatPeersSend) {
  const uint32_t n = 5;
  v1::TraceHeader h;
  auto* comm = h.add_communicators();
  comm->set_id("c");
  for (uint32_t r = 0; r < n; ++r) comm->add_ranks(r);
  auto expander = Expander::create(h, *Placement::uniform(n, 1, 1), ExpandOptions{});
  ASSERT_TRUE(expander.ok());
  std::vector<ExpandedOp> all;
  uint64_t expected = 0;
  for (uint32_t r = 0; r < n; ++r) {
    v1::Op op;
    op.set_rank(r);
    op.set_kind(v1::OP_KIND_ALL_TO_ALLV);
    op.set_comm("c");
    for (uint32_t q = 0; q < n; ++q) {
      const uint64_t b = (r + 1) * 1000 + q;
      op.add_peer_bytes(b);
      if (q != r) expected += b;
    }
    auto e = expander->expand(op);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    all.push_back(*e);
  }
  auto s = execute_instantly(all);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->bytes_delivered, expected);
}

TEST(ExpanderTest, SequencesMatchRepeatedCollectivesAndSends) {
  // Two all-reduces and two sends in a row: each is matched with its own counterpart.
  v1::TraceHeader h;
  auto* comm = h.add_communicators();
  comm->set_id("c");
  comm->add_ranks(0);
  comm->add_ranks(1);
  auto expander = Expander::create(h, *Placement::uniform(2, 1, 1), ExpandOptions{});
  std::vector<ExpandedOp> all;
  for (uint32_t r = 0; r < 2; ++r) {
    for (int i = 0; i < 2; ++i) {
      v1::Op op;
      op.set_rank(r);
      op.set_comm("c");
      op.set_kind(v1::OP_KIND_ALL_REDUCE);
      op.set_bytes(1000 * (i + 1));
      all.push_back(*expander->expand(op));
      op.set_kind(r == 0 ? v1::OP_KIND_SEND : v1::OP_KIND_RECV);
      op.set_root(1 - static_cast<int32_t>(r));
      all.push_back(*expander->expand(op));
    }
  }
  auto s = execute_instantly(all);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->bytes_delivered, 2 * 1000 + 2 * 2000 + 1000 + 2000);
}

TEST(ExpanderTest, RejectsBadInput) {
  v1::TraceHeader h;
  auto* comm = h.add_communicators();
  comm->set_id("c");
  comm->add_ranks(0);
  comm->add_ranks(1);
  auto placement = *Placement::uniform(2, 1, 1);
  ExpandOptions bad;
  bad.channels = 0;
  EXPECT_THAT(Expander::create(h, placement, bad), StatusIs(StatusCode::kInvalidArgument));
  auto expander = Expander::create(h, placement, ExpandOptions{});
  v1::Op op;
  op.set_rank(0);
  op.set_comm("nope");
  op.set_kind(v1::OP_KIND_ALL_REDUCE);
  op.set_bytes(8);
  EXPECT_NE(expander->expand(op).status().message().find("unknown communicator"),
            std::string::npos);
  op.set_comm("c");
  op.set_kind(v1::OP_KIND_SEND);
  op.set_root(5);
  EXPECT_THAT(expander->expand(op), StatusIs(StatusCode::kInvalidArgument));
  comm->add_ranks(7);  // beyond the placement
  EXPECT_THAT(Expander::create(h, placement, ExpandOptions{}),
              StatusIs(StatusCode::kInvalidArgument));
}

TEST(AccountingTest, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_ALL_REDUCE, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_ALL_GATHER, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_REDUCE_SCATTER, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_ALL_TO_ALL, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_BROADCAST, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_SEND, 2), 1.0);
  EXPECT_EQ(nccl_tests_size(v1::OP_KIND_ALL_GATHER, 8, 1024), 8192u);
  EXPECT_EQ(nccl_tests_size(v1::OP_KIND_ALL_REDUCE, 8, 1024), 1024u);
  // Ring all-reduce per rank: 2(n-1)/n of the buffer; busbw x time = bytes each rank sends.
  EXPECT_EQ(total_sent_bytes(v1::OP_KIND_ALL_REDUCE, 8, 8000) / 8,
            static_cast<uint64_t>(busbw_factor(v1::OP_KIND_ALL_REDUCE, 8) * 8000));
}

}  // namespace
}  // namespace collide::replayer::collectives
