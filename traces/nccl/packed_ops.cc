#include "traces/nccl/packed_ops.h"

#include <sys/mman.h>

#include <cstring>

namespace collide::traces::nccl {
namespace {

char* put_varint(char* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

uint64_t get_varint(const char*& p) {
  uint64_t v = static_cast<uint8_t>(*p++);
  if (v < 0x80) return v;
  v &= 0x7f;
  for (unsigned shift = 7;; shift += 7) {
    const uint64_t b = static_cast<uint8_t>(*p++);
    v |= (b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
}

}  // namespace

void PackedOps::new_chunk() {
  Chunk chunk;
  chunk.data = std::make_unique_for_overwrite<char[]>(kChunkBytes);
  // In 2 MB pages the chunk takes a fraction of the page faults (transparent huge pages are often
  // enabled only where asked for); failing the advice only costs speed.
  constexpr uintptr_t kHuge = 2u << 20;
  const auto begin = reinterpret_cast<uintptr_t>(chunk.data.get());
  const uintptr_t from = (begin + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t to = (begin + kChunkBytes) & ~(kHuge - 1);
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
  chunks_.push_back(std::move(chunk));
}

void PackedOps::clear() {
  for (Chunk& chunk : chunks_) chunk.used = 0;
  current_ = 0;
  marks_.clear();
  size_ = 0;
}

void PackedOps::append(uint32_t member, const OpWireFields& op) {
  if (chunks_.empty()) new_chunk();
  if (kChunkBytes - chunks_[current_].used < kMaxRecordBytes) {
    if (++current_ == chunks_.size()) new_chunk();
  }
  Chunk& chunk = chunks_[current_];
  if (size_ % kEvery == 0) marks_.push_back({current_, chunk.used});
  char* const start = chunk.data.get() + chunk.used;
  char* p = put_varint(start, member);
  // Each part after a one-byte length.
  static_assert(kMaxIndexKindBytes < 128 && kMaxRestBytes < 128);
  char* const index_kind = p++;
  p = put_op_index_kind(op, p);
  *index_kind = static_cast<char>(p - index_kind - 1);
  char* const rest = p++;
  p = put_op_rest(op, p);
  *rest = static_cast<char>(p - rest - 1);
  chunk.used += static_cast<size_t>(p - start);
  ++size_;
}

PackedOps::Reader::Reader(const PackedOps& ops, size_t first) : ops_(ops), chunk_(0), p_(nullptr) {
  if (first >= ops.size_) return;
  const Mark& mark = ops.marks_[first / kEvery];
  chunk_ = mark.chunk;
  p_ = ops.chunks_[chunk_].data.get() + mark.offset;
  PackedOpView skipped;
  for (size_t i = first / kEvery * kEvery; i < first; ++i) next(skipped);
}

void PackedOps::Reader::next(PackedOpView& op) {
  const Chunk* chunk = &ops_.chunks_[chunk_];
  if (p_ == chunk->data.get() + chunk->used) {
    chunk = &ops_.chunks_[++chunk_];
    p_ = chunk->data.get();
  }
  const char* p = p_;
  op.member = static_cast<uint32_t>(get_varint(p));
  const auto index_kind_size = static_cast<uint8_t>(*p++);
  op.index_kind = {p, index_kind_size};
  p += index_kind_size;
  const auto rest_size = static_cast<uint8_t>(*p++);
  op.rest = {p, rest_size};
  p_ = p + rest_size;
}

}  // namespace collide::traces::nccl
