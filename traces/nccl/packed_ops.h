#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "traces/nccl/op_wire.h"

// The ops of an NCCL import between reading them and writing the trace, packed: a big log holds
// millions of ops, and fresh memory is what this stage costs (every page is faulted in and zeroed
// once). An op keeps every field but its rank and communicator already in its wire encoding (the
// bytes the trace file holds), so writing it is copying; the rank and communicator are known only
// at the end, through the member. About 30 bytes per op, where a fixed-size record took 64.
//
// Ops are appended in order and read back in order from any op on, so disjoint ranges can be read
// by several threads at once.
namespace collide::traces::nccl {

struct PackedOpView {
  uint32_t member = 0;  // the init line (one process's view of a communicator) it was issued on
  std::string_view index_kind;  // put_op_index_kind's bytes
  std::string_view rest;        // put_op_rest's bytes
};

// Where resolved ops go: `op` holds all but the rank and communicator, which come from the
// member once the communicators are known.
class OpSink {
 public:
  virtual ~OpSink() = default;
  virtual void append(uint32_t member, const OpWireFields& op) = 0;
};

class PackedOps final : public OpSink {
 public:
  // Keeps all of `op` but its rank and communicator.
  void append(uint32_t member, const OpWireFields& op) override;
  size_t size() const { return size_; }
  // Forgets the ops but keeps the memory, for the next ones.
  void clear();

  // Reads ops in order, starting at op `first`.
  class Reader {
   public:
    Reader(const PackedOps& ops, size_t first);
    // The next op (its views point into the store); only as many times as there are ops after
    // `first`.
    void next(PackedOpView& op);

   private:
    const PackedOps& ops_;
    size_t chunk_;
    const char* p_;
  };

 private:
  // Records never straddle chunks; a chunk's records end at its `used`.
  static constexpr size_t kChunkBytes = 8u << 20;
  static constexpr size_t kMaxRecordBytes = 5 + 2 + kMaxIndexKindBytes + kMaxRestBytes;
  // Every kEvery-th op's position, where reading from an arbitrary op starts.
  static constexpr size_t kEvery = 1024;
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t used = 0;
  };
  struct Mark {
    size_t chunk;
    size_t offset;
  };
  void new_chunk();

  std::vector<Chunk> chunks_;
  size_t current_ = 0;  // the chunk being appended to
  std::vector<Mark> marks_;
  size_t size_ = 0;
};

}  // namespace collide::traces::nccl
