#include "traces/analysis/traffic_model.h"

namespace collide::traces::analysis {

uint64_t total_sent_bytes(v1::OpKind kind, uint32_t n, uint64_t bytes) {
  if (n < 2) return kind == v1::OP_KIND_SEND ? bytes : 0;
  const uint64_t m = n - 1;
  switch (kind) {
    case v1::OP_KIND_ALL_REDUCE: return 2 * m * bytes;
    case v1::OP_KIND_ALL_GATHER:
    case v1::OP_KIND_REDUCE_SCATTER:
    case v1::OP_KIND_ALL_TO_ALL: return m * n * bytes;
    case v1::OP_KIND_BROADCAST:
    case v1::OP_KIND_REDUCE:
    case v1::OP_KIND_GATHER:
    case v1::OP_KIND_SCATTER: return m * bytes;
    case v1::OP_KIND_BARRIER: return m * n;  // one byte from each rank to each other
    case v1::OP_KIND_SEND: return bytes;
    default: return 0;  // receives send nothing; all-to-allv depends on every rank's sizes
  }
}

uint64_t full_mesh_sent_bytes(v1::OpKind kind, uint32_t n, uint64_t bytes) {
  if (n < 2) return kind == v1::OP_KIND_SEND ? bytes : 0;
  const uint64_t m = n - 1;
  switch (kind) {
    // Every rank holds a whole buffer and sends all of it to each of the others.
    case v1::OP_KIND_ALL_REDUCE: return m * n * bytes;
    // Op.bytes is already the per-rank chunk (all-gather: what a rank contributes;
    // reduce-scatter: what it ends up with), and the chunk goes to each other rank, so the
    // full-mesh figure and NCCL's ring coincide for these kinds.
    case v1::OP_KIND_ALL_GATHER:
    case v1::OP_KIND_REDUCE_SCATTER:
    case v1::OP_KIND_ALL_TO_ALL: return m * n * bytes;
    // One rank's buffer to (or from) each of the others.
    case v1::OP_KIND_BROADCAST:
    case v1::OP_KIND_REDUCE:
    case v1::OP_KIND_GATHER:
    case v1::OP_KIND_SCATTER: return m * bytes;
    case v1::OP_KIND_BARRIER: return m * n;
    case v1::OP_KIND_SEND: return bytes;
    default: return 0;
  }
}

uint64_t alltoallv_sent_bytes(const v1::Op& op, uint32_t self) {
  uint64_t sum = 0;
  for (int i = 0; i < op.peer_bytes_size(); ++i) {
    if (static_cast<uint32_t>(i) != self) sum += op.peer_bytes(i);
  }
  return sum;
}

uint64_t nccl_tests_size(v1::OpKind kind, uint32_t n, uint64_t bytes) {
  switch (kind) {
    case v1::OP_KIND_ALL_GATHER:
    case v1::OP_KIND_REDUCE_SCATTER:
    case v1::OP_KIND_ALL_TO_ALL:
    case v1::OP_KIND_GATHER:
    case v1::OP_KIND_SCATTER: return static_cast<uint64_t>(n) * bytes;
    default: return bytes;
  }
}

double busbw_factor(v1::OpKind kind, uint32_t n) {
  if (n == 0) return 0;
  const double ratio = static_cast<double>(n - 1) / n;
  switch (kind) {
    case v1::OP_KIND_ALL_REDUCE: return 2 * ratio;
    case v1::OP_KIND_ALL_GATHER:
    case v1::OP_KIND_REDUCE_SCATTER:
    case v1::OP_KIND_ALL_TO_ALL:
    case v1::OP_KIND_ALL_TO_ALLV:
    case v1::OP_KIND_GATHER:
    case v1::OP_KIND_SCATTER: return ratio;
    default: return 1.0;
  }
}

}  // namespace collide::traces::analysis
