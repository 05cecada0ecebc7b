#include "traces/chakra/comm_size.h"

#include <fmt/format.h>

namespace collide::traces::chakra {
namespace {

// The kinds whose comm_size is the whole buffer of the group, n times Op.bytes.
bool whole_group_buffer(v1::OpKind kind) {
  return kind == v1::OP_KIND_REDUCE_SCATTER || kind == v1::OP_KIND_ALL_TO_ALL ||
         kind == v1::OP_KIND_ALL_TO_ALLV;
}

}  // namespace

Result<uint64_t> op_bytes_from_comm_size(v1::OpKind kind, uint64_t comm_size,
                                         uint32_t group_size) {
  if (!whole_group_buffer(kind) || group_size <= 1) return comm_size;
  if (comm_size % group_size != 0) {
    return invalid_argument(fmt::format(
        "comm_size {} of a {} is the whole buffer of its {} ranks but does not split evenly "
        "over them",
        comm_size, kind == v1::OP_KIND_REDUCE_SCATTER ? "reduce-scatter" : "all-to-all",
        group_size));
  }
  return comm_size / group_size;
}

uint64_t comm_size_from_op(const v1::Op& op, uint32_t group_size) {
  if (op.kind() == v1::OP_KIND_ALL_TO_ALLV && op.peer_bytes_size() > 0) {
    uint64_t sum = 0;
    for (uint64_t b : op.peer_bytes()) sum += b;
    return sum;
  }
  if (!whole_group_buffer(op.kind()) || group_size <= 1) return op.bytes();
  return op.bytes() * group_size;
}

}  // namespace collide::traces::chakra
