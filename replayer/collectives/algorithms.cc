#include "replayer/collectives/algorithms.h"

#include "replayer/collectives/double_binary_tree.h"

namespace collide::replayer::collectives {
namespace {

using SliceIds = std::vector<uint32_t>;  // one step id per slice of a transfer

// Adds a transfer as slices; slice j depends on slice j of every transfer in `after`.
SliceIds transfer(StepBuilder& b, StepKind kind, uint32_t peer, uint64_t bytes, FlowTag tag,
                  const std::vector<const SliceIds*>& after = {}) {
  if (!b.keeps(kind, peer)) return {};
  const uint32_t slices = b.slice_count(bytes);
  SliceIds ids(slices);
  for (uint32_t j = 0; j < slices; ++j) {
    StepDeps deps;
    for (const SliceIds* prior : after) {
      // Transfers that feed each other carry the same bytes, hence the same slices; the guard
      // keeps a mismatch from reading past the end.
      if (j < prior->size()) deps.push_back((*prior)[j]);
    }
    tag.slice = j;
    ids[j] = b.add(kind, peer, b.slice_bytes(bytes, j), tag, std::move(deps));
  }
  return ids;
}

uint64_t mod(int64_t a, uint32_t n) { return static_cast<uint64_t>(((a % n) + n) % n); }

// A ring rank talks only to its two neighbours: when the builder keeps neither (a PXN probe of a
// rank this one does not relay for), there is nothing to walk.
bool ring_kept(const StepBuilder& b, const ChannelView& v) {
  return b.keeps(StepKind::kSend, v.at(1)) || b.keeps(StepKind::kRecv, v.at(-1));
}

}  // namespace

uint32_t ChannelView::at(int64_t offset) const {
  return order[mod(static_cast<int64_t>(pos) + offset, n())];
}

void ring_all_reduce(StepBuilder& b, const ChannelView& v, uint64_t bytes) {
  const uint32_t n = v.n();
  if (n < 2 || !ring_kept(b, v)) return;
  const auto p = static_cast<int64_t>(v.pos);
  auto chunk = [&](int64_t index) { return share_of(bytes, n, static_cast<uint32_t>(mod(index, n))); };
  SliceIds received;
  for (uint32_t s = 0; s < 2 * (n - 1); ++s) {
    // Reduce-scatter: send chunk p-s, receive chunk p-s-1. All-gather (t = s-n+1): send chunk
    // p+1-t, receive chunk p-t. Each send forwards what the previous step received.
    const bool reduce_phase = s < n - 1;
    const int64_t t = static_cast<int64_t>(s) - (n - 1);
    const int64_t send_chunk = reduce_phase ? p - s : p + 1 - t;
    const int64_t recv_chunk = reduce_phase ? p - s - 1 : p - t;
    std::vector<const SliceIds*> after;
    if (s > 0) after.push_back(&received);
    transfer(b, StepKind::kSend, v.at(1), chunk(send_chunk), v.tag(s), after);
    received = transfer(b, StepKind::kRecv, v.at(-1), chunk(recv_chunk), v.tag(s));
  }
}

void ring_all_gather(StepBuilder& b, const ChannelView& v, uint64_t bytes_per_rank) {
  const uint32_t n = v.n();
  if (n < 2 || !ring_kept(b, v)) return;
  SliceIds received;
  for (uint32_t s = 0; s + 1 < n; ++s) {
    std::vector<const SliceIds*> after;
    if (s > 0) after.push_back(&received);
    transfer(b, StepKind::kSend, v.at(1), bytes_per_rank, v.tag(s), after);
    received = transfer(b, StepKind::kRecv, v.at(-1), bytes_per_rank, v.tag(s));
  }
}

void ring_reduce_scatter(StepBuilder& b, const ChannelView& v, uint64_t bytes_per_rank) {
  // Same shape as all-gather: n-1 steps of one rank's share, each forwarding (after reducing)
  // what the previous step brought.
  ring_all_gather(b, v, bytes_per_rank);
}

void tree_all_reduce(StepBuilder& b, const ChannelView& v, int which, uint64_t bytes) {
  const uint32_t n = v.n();
  if (n < 2) return;
  const std::vector<TreeLinks> tree = double_binary_tree(n, which);
  const TreeLinks& me = tree[v.pos];
  // Up: receive every child's partial sum, add ours, pass it to the parent.
  std::vector<SliceIds> from_children;
  for (uint32_t child : me.children) {
    from_children.push_back(transfer(b, StepKind::kRecv, v.order[child], bytes, v.tag(0)));
  }
  std::vector<const SliceIds*> reduced;
  for (const SliceIds& ids : from_children) reduced.push_back(&ids);
  SliceIds from_parent;
  if (me.parent >= 0) {
    const uint32_t parent = v.order[static_cast<uint32_t>(me.parent)];
    transfer(b, StepKind::kSend, parent, bytes, v.tag(0), reduced);
    // Down: the parent sends the final sum back.
    from_parent = transfer(b, StepKind::kRecv, parent, bytes, v.tag(1));
  }
  std::vector<const SliceIds*> ready = me.parent >= 0 ? std::vector<const SliceIds*>{&from_parent}
                                                      : reduced;
  for (uint32_t child : me.children) {
    transfer(b, StepKind::kSend, v.order[child], bytes, v.tag(1), ready);
  }
}

// A pipelined chain around the ring: the rank `hops` after the chain's start receives from the
// one before it and, unless last, passes each slice on as soon as it has it.
static void chain(StepBuilder& b, const ChannelView& v, uint64_t hops, uint64_t bytes) {
  SliceIds received;
  std::vector<const SliceIds*> after;
  if (hops > 0) {
    received = transfer(b, StepKind::kRecv, v.at(-1), bytes, v.tag(0));
    after.push_back(&received);
  }
  if (hops + 1 < v.n()) transfer(b, StepKind::kSend, v.at(1), bytes, v.tag(0), after);
}

void chain_broadcast(StepBuilder& b, const ChannelView& v, uint32_t root_pos, uint64_t bytes) {
  chain(b, v, mod(static_cast<int64_t>(v.pos) - root_pos, v.n()), bytes);  // starts at the root
}

void chain_reduce(StepBuilder& b, const ChannelView& v, uint32_t root_pos, uint64_t bytes) {
  // Starts just after the root and ends at it.
  chain(b, v, mod(static_cast<int64_t>(v.pos) - root_pos - 1, v.n()), bytes);
}

void direct_gather(StepBuilder& b, const ChannelView& v, uint32_t root_pos,
                   uint64_t bytes_per_rank) {
  if (v.pos != root_pos) {
    transfer(b, StepKind::kSend, v.order[root_pos], bytes_per_rank, v.tag(0));
    return;
  }
  for (uint32_t q = 0; q < v.n(); ++q) {
    if (q != root_pos) transfer(b, StepKind::kRecv, v.order[q], bytes_per_rank, v.tag(0));
  }
}

void direct_scatter(StepBuilder& b, const ChannelView& v, uint32_t root_pos,
                    uint64_t bytes_per_rank) {
  if (v.pos != root_pos) {
    transfer(b, StepKind::kRecv, v.order[root_pos], bytes_per_rank, v.tag(0));
    return;
  }
  for (uint32_t q = 0; q < v.n(); ++q) {
    if (q != root_pos) transfer(b, StepKind::kSend, v.order[q], bytes_per_rank, v.tag(0));
  }
}

void pairwise_all_to_all(StepBuilder& b, const ChannelView& v,
                         const std::vector<uint64_t>& bytes_to_pos,
                         const std::vector<uint64_t>& bytes_from_pos) {
  const uint32_t n = v.n();
  for (uint32_t i = 1; i < n; ++i) {
    const auto to = static_cast<uint32_t>(mod(static_cast<int64_t>(v.pos) + i, n));
    const auto from = static_cast<uint32_t>(mod(static_cast<int64_t>(v.pos) - i, n));
    transfer(b, StepKind::kSend, v.order[to], bytes_to_pos[to], v.tag(i));
    if (!b.keeps(StepKind::kRecv, v.order[from])) continue;
    if (bytes_from_pos.empty()) {
      // Sizes known only to the senders: one receive per peer, sized by what arrives.
      const uint32_t id = b.add(StepKind::kRecv, v.order[from], 0, v.tag(i));
      b.mark_size_from_sender(id);
    } else {
      transfer(b, StepKind::kRecv, v.order[from], bytes_from_pos[from], v.tag(i));
    }
  }
}

void point_to_point(StepBuilder& b, const ChannelView& v, StepKind kind, uint32_t peer,
                    uint64_t bytes) {
  transfer(b, kind, peer, bytes, v.tag(0));
}

}  // namespace collide::replayer::collectives
