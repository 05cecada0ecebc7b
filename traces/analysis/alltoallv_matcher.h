#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "collide/trace.pb.h"

// Checks all-to-allv sizes across ranks: in the k-th all-to-allv of a communicator, what comm
// rank a sends to b (a's peer_bytes[b]) must be what b expects from a (b's peer_recv_bytes[a]).
// Ops without receive sizes (sources that give only the send side) are not compared.
//
// Streaming in bounded memory, like the rest of the validator: the first pass adds, per
// communicator and block of instances, a hash of every (k, sender, receiver, size) seen from the
// sending side and one of those seen from the receiving side; sums, so the order ranks appear in
// the file does not matter. A block whose two sums differ holds a mismatch; the second pass keeps
// just that block's all-to-allv ops to name the first pair that differs. Blocks hold at most
// kPairBudget (sender, receiver) pairs, so a located block takes a few MB at most.
namespace collide::traces::analysis {

class AllToAllvMatcher {
 public:
  static constexpr uint64_t kPairBudget = 1 << 18;
  // Larger communicators are checked but a mismatch is not located pair by pair: one instance
  // would hold more than this many pairs.
  static constexpr uint64_t kMaxLocatedPairs = 1 << 22;

  struct Block {
    uint32_t comm = 0;
    uint64_t block = 0;
    bool operator<(const Block& o) const { return std::pair(comm, block) < std::pair(o.comm, o.block); }
  };

  struct KeptOp {
    uint64_t file_position = 0;
    v1::Op op;
  };

  // The first differing pair of a block: the sender's and the receiver's ops of that instance.
  struct Difference {
    uint64_t instance = 0;  // the all-to-allv's number on its communicator, from 0
    uint32_t from = 0, to = 0;  // comm ranks
    uint64_t sent = 0, expected = 0;
    const KeptOp* sender = nullptr;
    const KeptOp* receiver = nullptr;
  };

  // Communicators are added in index order, each with its number of ranks.
  void add_comm(uint32_t ranks);

  // Both passes call this for every all-to-allv of comm rank `self` on communicator `comm`; the
  // second pass keeps the ops of the blocks wanted.
  void start_pass(int number);
  void observe(uint32_t comm, uint32_t self, const v1::Op& op, uint64_t file_position);

  // After the first pass: blocks whose sums differ, in (communicator, block) order.
  std::vector<Block> mismatched() const;
  // Whether a block of this communicator can be located, and asks the second pass to keep it.
  bool locatable(uint32_t comm) const;
  void want(const Block& block);
  // After the second pass.
  std::optional<Difference> locate(const Block& block) const;

 private:
  struct Comm {
    uint32_t ranks = 0;
    uint64_t block_size = 1;                               // instances per block
    std::vector<uint64_t> seen;                            // per comm rank: its all-to-allvs
    std::vector<std::pair<uint64_t, uint64_t>> sums;       // per block: sending, receiving sides
  };
  using Window = std::map<std::pair<uint64_t, uint32_t>, KeptOp>;  // (instance, comm rank)

  std::vector<Comm> comms_;
  std::map<Block, Window> windows_;
  int pass_ = 1;
};

}  // namespace collide::traces::analysis
