#include "traces/analysis/alltoallv_matcher.h"

#include <algorithm>

namespace collide::traces::analysis {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// One entry of the size matrix of instance k; summed, so the order of the entries is free.
uint64_t entry(uint64_t instance, uint32_t from, uint32_t to, uint64_t bytes) {
  return mix(mix(mix(instance) ^ ((static_cast<uint64_t>(from) << 32) | to)) ^ bytes);
}

// Sizes the check can use: one per comm rank on both sides.
bool comparable(const v1::Op& op, uint32_t ranks) {
  return op.peer_bytes_size() == static_cast<int>(ranks) &&
         op.peer_recv_bytes_size() == static_cast<int>(ranks);
}

}  // namespace

void AllToAllvMatcher::add_comm(uint32_t ranks) {
  Comm& c = comms_.emplace_back();
  c.ranks = ranks;
  const uint64_t pairs = std::max<uint64_t>(1, static_cast<uint64_t>(ranks) * ranks);
  c.block_size = std::max<uint64_t>(1, kPairBudget / pairs);
  c.seen.assign(ranks, 0);
}

void AllToAllvMatcher::start_pass(int number) {
  pass_ = number;
  for (Comm& c : comms_) std::fill(c.seen.begin(), c.seen.end(), 0);
}

void AllToAllvMatcher::observe(uint32_t comm, uint32_t self, const v1::Op& op,
                               uint64_t file_position) {
  Comm& c = comms_[comm];
  const uint64_t instance = c.seen[self]++;
  if (!comparable(op, c.ranks)) return;
  const uint64_t block = instance / c.block_size;
  if (pass_ == 2) {
    const auto window = windows_.find({comm, block});
    if (window != windows_.end()) window->second[{instance, self}] = {file_position, op};
    return;
  }
  if (c.sums.size() <= block) c.sums.resize(block + 1);
  auto& [sending, receiving] = c.sums[block];
  for (uint32_t peer = 0; peer < c.ranks; ++peer) {
    const int i = static_cast<int>(peer);
    sending += entry(instance, self, peer, op.peer_bytes(i));
    receiving += entry(instance, peer, self, op.peer_recv_bytes(i));
  }
}

std::vector<AllToAllvMatcher::Block> AllToAllvMatcher::mismatched() const {
  std::vector<Block> out;
  for (uint32_t comm = 0; comm < comms_.size(); ++comm) {
    const auto& sums = comms_[comm].sums;
    for (uint64_t b = 0; b < sums.size(); ++b) {
      if (sums[b].first != sums[b].second) out.push_back({comm, b});
    }
  }
  return out;
}

bool AllToAllvMatcher::locatable(uint32_t comm) const {
  const uint64_t n = comms_[comm].ranks;
  return n * n <= kMaxLocatedPairs;
}

void AllToAllvMatcher::want(const Block& block) {
  windows_.try_emplace(block);
}

std::optional<AllToAllvMatcher::Difference> AllToAllvMatcher::locate(const Block& block) const {
  const auto window = windows_.find(block);
  if (window == windows_.end()) return std::nullopt;
  const Window& kept = window->second;
  const uint32_t n = comms_[block.comm].ranks;
  const uint64_t first = block.block * comms_[block.comm].block_size;
  for (uint64_t instance = first; instance < first + comms_[block.comm].block_size; ++instance) {
    for (uint32_t from = 0; from < n; ++from) {
      const auto sender = kept.find({instance, from});
      if (sender == kept.end()) continue;
      for (uint32_t to = 0; to < n; ++to) {
        const auto receiver = kept.find({instance, to});
        if (receiver == kept.end()) continue;
        const uint64_t sent = sender->second.op.peer_bytes(static_cast<int>(to));
        const uint64_t expected = receiver->second.op.peer_recv_bytes(static_cast<int>(from));
        if (sent != expected) {
          return Difference{instance, from, to, sent, expected, &sender->second,
                            &receiver->second};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace collide::traces::analysis
