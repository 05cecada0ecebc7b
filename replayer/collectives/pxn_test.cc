#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "replayer/collectives/expander.h"
#include "replayer/collectives/instant_execution.h"
#include "replayer/collectives/pxn_relays.h"
#include "traces/op_types.h"

// NCCL's PXN relay in the expansion: a send to a rank on another rail of another host goes over
// NVLink to the local rank on the receiver's rail, which sends it on over its own NIC.
namespace collide::replayer::collectives {
namespace {

constexpr uint32_t kHosts = 2;
constexpr uint32_t kRanksPerHost = 4;
constexpr uint32_t kNics = 4;
constexpr uint32_t kWorld = kHosts * kRanksPerHost;

// A job of `world` ranks with one communicator, "world", of `members` (all ranks if empty).
v1::TraceHeader header_of(uint32_t world, std::vector<uint32_t> members = {}) {
  v1::TraceHeader h;
  h.set_world_size(world);
  auto* comm = h.add_communicators();
  comm->set_id("world");
  if (members.empty()) {
    for (uint32_t r = 0; r < world; ++r) members.push_back(r);
  }
  for (uint32_t r : members) comm->add_ranks(r);
  return h;
}

v1::TraceHeader world_header() { return header_of(kWorld); }

v1::Op op_of(uint32_t rank, v1::OpKind kind, uint64_t bytes, int32_t root = 0) {
  v1::Op op;
  op.set_rank(rank);
  op.set_kind(kind);
  op.set_comm("world");
  op.set_bytes(bytes);
  op.set_root(root);
  return op;
}

ExpandOptions small_slices(bool pxn) {
  ExpandOptions o;
  o.channels = 2;
  o.slice_bytes = 64 * 1024;
  o.qps_per_connection = 2;
  o.pxn = pxn;
  return o;
}

// Every rank's expansion of one op (a send/recv pair: rank 1 sends to rank 6), each rank by an
// expander of its own, as each agent expands only its own ranks.
std::vector<ExpandedOp> expand_world(v1::OpKind kind, uint64_t bytes, const ExpandOptions& options,
                                     const v1::TraceHeader& header = world_header(),
                                     uint32_t ranks_per_host = kRanksPerHost) {
  const auto world = static_cast<uint32_t>(header.world_size());
  auto placement = Placement::uniform(world, ranks_per_host, kNics);
  EXPECT_TRUE(placement.ok());
  std::vector<ExpandedOp> out;
  std::vector<v1::Op> ops;
  if (kind == v1::OP_KIND_SEND) {
    ops.push_back(op_of(1, v1::OP_KIND_SEND, bytes, 6));
    ops.push_back(op_of(6, v1::OP_KIND_RECV, bytes, 1));
  } else {
    for (uint32_t r : header.communicators(0).ranks()) ops.push_back(op_of(r, kind, bytes, 2));
  }
  for (const v1::Op& op : ops) {
    auto expander = Expander::create(header, *placement, options);
    EXPECT_TRUE(expander.ok()) << expander.status().to_string();
    if (!expander.ok()) return out;
    auto e = expander->expand(op);
    EXPECT_TRUE(e.ok()) << e.status().to_string();
    if (e.ok()) out.push_back(std::move(e).value());
  }
  return out;
}

// FNV-1a over every field of every step: equal fingerprints mean equal expansions.
struct Fingerprint {
  uint64_t h = 1469598103934665603ull;
  void mix(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  void add(const ExpandedOp& op) {
    mix(op.rank);
    mix(op.steps.size());
    for (const Step& s : op.steps) {
      mix(s.id);
      mix(static_cast<uint64_t>(s.kind));
      mix(s.peer);
      mix(s.bytes);
      mix(s.tag.point_to_point);
      mix(s.tag.op_seq);
      mix(s.tag.channel);
      mix(s.tag.step);
      mix(s.tag.slice);
      mix(s.qp);
      mix(s.local);
      mix(s.local_ns);
      mix(s.size_from_sender);
      mix(s.deps.size());
      for (uint32_t d : s.deps) mix(d);
    }
  }
};

const v1::OpKind kKinds[] = {v1::OP_KIND_ALL_REDUCE, v1::OP_KIND_ALL_GATHER,
                             v1::OP_KIND_REDUCE_SCATTER, v1::OP_KIND_ALL_TO_ALL,
                             v1::OP_KIND_BROADCAST, v1::OP_KIND_REDUCE, v1::OP_KIND_GATHER,
                             v1::OP_KIND_SCATTER, v1::OP_KIND_BARRIER, v1::OP_KIND_SEND};

TEST(PxnTest, OffExpandsExactlyAsBeforePxnExisted) {
  // The fingerprint of this expansion without the PXN relay (recorded before the relay existed,
  // and again when each ring channel began to enter the hosts on its own rail): with PXN off,
  // the relay code may change nothing.
  Fingerprint f;
  for (bool tree : {false, true}) {
    for (v1::OpKind kind : kKinds) {
      ExpandOptions o = small_slices(false);
      o.all_reduce = tree ? AllReduceAlgorithm::kTree : AllReduceAlgorithm::kRing;
      for (const ExpandedOp& e : expand_world(kind, (1 << 20) + 13, o)) f.add(e);
    }
  }
  EXPECT_EQ(f.h, 528637405109233073ull);
}

// What the network and NVLink carry, per (sender, receiver) as the steps name them.
struct Traffic {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> network_sent, network_received;
  // NVLink hops into relays, by (origin, final receiver); network hops out of relays, by
  // (origin host index, final receiver) and the origin's host.
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> relay_in;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint64_t> relay_out;
  uint64_t network_total = 0;
  uint64_t cross_rail = 0;  // network bytes between different NIC indices
};

Traffic traffic_of(const std::vector<ExpandedOp>& ops, const Placement& placement) {
  Traffic t;
  for (const ExpandedOp& e : ops) {
    for (const Step& s : e.steps) {
      EXPECT_EQ(s.local, placement.same_host(e.rank, s.peer));
      if (s.kind == StepKind::kSend && s.tag.relay_to != 0) {
        EXPECT_TRUE(s.local);
        t.relay_in[{e.rank, s.tag.relay_to - 1}] += s.bytes;
      }
      if (s.local) continue;
      if (s.kind == StepKind::kRecv) {
        t.network_received[{s.peer, e.rank}] += s.bytes;
        continue;
      }
      t.network_sent[{e.rank, s.peer}] += s.bytes;
      t.network_total += s.bytes;
      if (placement.nic_of_rank[e.rank] != placement.nic_of_rank[s.peer]) t.cross_rail += s.bytes;
      if (s.tag.relay_from != 0) {
        t.relay_out[{placement.host_of_rank[e.rank], s.tag.relay_from - 1, s.peer}] += s.bytes;
      }
    }
  }
  return t;
}

const v1::OpKind kRelayedKinds[] = {v1::OP_KIND_ALL_REDUCE, v1::OP_KIND_ALL_GATHER,
                                    v1::OP_KIND_ALL_TO_ALL};

TEST(PxnTest, OnKeepsInterHostTrafficOnRailsAndDeliversEveryByte) {
  const Placement placement = *Placement::uniform(kWorld, kRanksPerHost, kNics);
  const std::vector<uint32_t> index = index_on_host(placement);
  for (bool tree : {false, true}) {
    for (v1::OpKind kind : kRelayedKinds) {
      SCOPED_TRACE(fmt::format("{} tree={}", traces::op_kind_name(kind), tree));
      ExpandOptions on = small_slices(true);
      ExpandOptions off = small_slices(false);
      on.all_reduce = off.all_reduce = tree ? AllReduceAlgorithm::kTree : AllReduceAlgorithm::kRing;
      const uint64_t bytes = (1 << 20) + 13;
      const std::vector<ExpandedOp> relayed = expand_world(kind, bytes, on);
      const std::vector<ExpandedOp> direct = expand_world(kind, bytes, off);
      auto run_on = execute_instantly(relayed);
      auto run_off = execute_instantly(direct);
      ASSERT_TRUE(run_on.ok()) << run_on.status().to_string();
      ASSERT_TRUE(run_off.ok()) << run_off.status().to_string();
      const Traffic t = traffic_of(relayed, placement);
      const Traffic d = traffic_of(direct, placement);
      // Without PXN the transfers cross rails; with it none does, and the same bytes still
      // cross between the hosts.
      EXPECT_GT(d.cross_rail, 0u);
      EXPECT_EQ(t.cross_rail, 0u);
      EXPECT_EQ(t.network_total, d.network_total);
      EXPECT_EQ(run_on->network_bytes, run_off->network_bytes);
      // Every byte sent over the network to a rank is received by it from that sender.
      EXPECT_EQ(t.network_sent, t.network_received);
      EXPECT_EQ(d.network_sent, d.network_received);
      // What went to a relay over NVLink for a receiver is what the relay sent it, and both are
      // what the origin sent it across the rails without PXN.
      ASSERT_FALSE(t.relay_in.empty());
      uint64_t relayed_in = 0;
      for (const auto& [ends, n] : t.relay_in) {
        const auto [origin, receiver] = ends;
        EXPECT_NE(placement.nic_of_rank[origin], placement.nic_of_rank[receiver]);
        EXPECT_EQ(n, d.network_sent.at({origin, receiver}));
        auto out = t.relay_out.find({placement.host_of_rank[origin], index[origin], receiver});
        ASSERT_NE(out, t.relay_out.end());
        EXPECT_EQ(out->second, n);
        relayed_in += n;
      }
      EXPECT_EQ(relayed_in, d.cross_rail);
      EXPECT_EQ(t.relay_out.size(), t.relay_in.size());
      EXPECT_EQ(run_on->bytes_delivered, run_off->bytes_delivered + relayed_in);
    }
  }
}

TEST(PxnTest, EveryCollectiveRunsWithRelaysAndMoreRanksThanNics) {
  // 8 ranks per host on 4 NICs: two ranks share each rail, the lower one relays.
  const v1::TraceHeader h = header_of(16);
  const Placement placement = *Placement::uniform(16, 8, kNics);
  for (v1::OpKind kind : kKinds) {
    SCOPED_TRACE(traces::op_kind_name(kind));
    const std::vector<ExpandedOp> ops = expand_world(kind, 300000, small_slices(true), h, 8);
    auto run = execute_instantly(ops);
    ASSERT_TRUE(run.ok()) << run.status().to_string();
    const Traffic t = traffic_of(ops, placement);
    EXPECT_EQ(t.network_sent, t.network_received);
    if (kind == v1::OP_KIND_SEND) continue;  // sends/recvs go direct (ExpandOptions::pxn)
    EXPECT_EQ(t.cross_rail, 0u);
    for (const ExpandedOp& e : ops) {
      for (const Step& s : e.steps) {
        if (s.kind == StepKind::kSend && s.tag.relay_to != 0) {
          EXPECT_LT(s.peer, 4u + 8 * placement.host_of_rank[s.peer]);
        }
      }
    }
  }
}

TEST(PxnTest, RelayMustBeAMemberOfTheCommunicator) {
  // Ranks 0 (host 0, NIC 0) and 5 (host 1, NIC 1) alone: neither host has a member on the
  // other's rail, so their transfers cross rails.
  v1::TraceHeader h = header_of(kWorld, {0, 5});
  const Placement placement = *Placement::uniform(kWorld, kRanksPerHost, kNics);
  auto pair = expand_world(v1::OP_KIND_ALL_TO_ALL, 4096, small_slices(true), h);
  ASSERT_TRUE(execute_instantly(pair).ok());
  Traffic t = traffic_of(pair, placement);
  EXPECT_TRUE(t.relay_in.empty());
  EXPECT_EQ(t.cross_rail, t.network_total);
  EXPECT_GT(t.network_total, 0u);

  // With rank 1 (host 0, NIC 1), 0 -> 5 goes through 1; 5 -> 0 still has no relay on host 1.
  h.mutable_communicators(0)->add_ranks(1);
  auto three = expand_world(v1::OP_KIND_ALL_TO_ALL, 4096, small_slices(true), h);
  auto run = execute_instantly(three);
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  t = traffic_of(three, placement);
  EXPECT_EQ(t.relay_in.size(), 1u);
  EXPECT_EQ(t.relay_in.count({0, 5}), 1u);
  EXPECT_EQ(t.network_sent.count({0, 5}), 0u);
  EXPECT_EQ(t.network_sent.at({1, 5}), 2 * 4096u);  // its own and 0's
  EXPECT_EQ(t.cross_rail, t.network_sent.at({5, 0}));
}

TEST(PxnTest, SendsAndReceivesGoDirect) {
  const Placement placement = *Placement::uniform(kWorld, kRanksPerHost, kNics);
  auto pair = expand_world(v1::OP_KIND_SEND, 4096, small_slices(true));
  ASSERT_EQ(pair.size(), 2u);
  for (const ExpandedOp& e : pair) {
    for (const Step& s : e.steps) {
      EXPECT_FALSE(s.local);
      EXPECT_EQ(s.peer, e.rank == 1 ? 6u : 1u);
    }
  }
  EXPECT_GT(traffic_of(pair, placement).cross_rail, 0u);
}

}  // namespace
}  // namespace collide::replayer::collectives
