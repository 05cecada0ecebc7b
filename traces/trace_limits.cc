#include "traces/trace_limits.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/input_limits.h"

namespace collide::traces {
namespace {

std::string above(uint64_t value, uint64_t limit, const char* what) {
  return fmt::format("{} is above the limit of {} {} (common/input_limits.h)", value, limit, what);
}

}  // namespace

Status check_header_limits(const v1::TraceHeader& header, const std::string& path) {
  const uint32_t max = limits::kMaxWorldSize;
  if (header.world_size() > max) {
    return invalid_argument(fmt::format("{}: header: world_size: {}", path, above(header.world_size(), max, "ranks")));
  }
  for (int i = 0; i < header.ranks_size(); ++i) {
    if (header.ranks(i).rank() >= max) {
      return invalid_argument(fmt::format("{}: header: ranks[{}]: rank {}", path, i,
                                          above(header.ranks(i).rank(), max - 1, "(the last rank)")));
    }
  }
  for (int i = 0; i < header.communicators_size(); ++i) {
    const v1::Communicator& c = header.communicators(i);
    if (static_cast<uint32_t>(c.ranks_size()) > max || c.declared_size() > max) {
      return invalid_argument(fmt::format("{}: header: communicators[{}] '{}': size {}", path, i, c.id(),
                                          above(std::max<uint64_t>(c.ranks_size(), c.declared_size()), max, "ranks")));
    }
    for (uint32_t r : c.ranks()) {
      if (r >= max) {
        return invalid_argument(fmt::format("{}: header: communicators[{}] '{}': rank {}", path, i, c.id(),
                                            above(r, max - 1, "(the last rank)")));
      }
    }
  }
  return {};
}

Status check_op_limits(const v1::Op& op, uint64_t number, const std::string& path) {
  const auto refuse = [&](const std::string& field, const std::string& what) {
    return invalid_argument(fmt::format("{}: op #{} (rank {}, index {}): {}: {}", path, number, op.rank(),
                                        op.index(), field, what));
  };
  if (op.rank() >= limits::kMaxWorldSize) return refuse("rank", above(op.rank(), limits::kMaxWorldSize - 1, "(the last rank)"));
  if (op.bytes() > limits::kMaxOpBytes) return refuse("bytes", above(op.bytes(), limits::kMaxOpBytes, "bytes"));
  // count is elements of at least one byte: never more than the bytes limit.
  if (op.count() > limits::kMaxOpBytes) return refuse("count", above(op.count(), limits::kMaxOpBytes, "elements"));
  if (static_cast<uint32_t>(op.peer_bytes_size()) > limits::kMaxWorldSize ||
      static_cast<uint32_t>(op.peer_recv_bytes_size()) > limits::kMaxWorldSize) {
    return refuse("peer_bytes", fmt::format("more than {} peers", limits::kMaxWorldSize));
  }
  for (int i = 0; i < op.peer_bytes_size(); ++i) {
    if (op.peer_bytes(i) > limits::kMaxOpBytes) {
      return refuse(fmt::format("peer_bytes[{}]", i), above(op.peer_bytes(i), limits::kMaxOpBytes, "bytes"));
    }
  }
  for (int i = 0; i < op.peer_recv_bytes_size(); ++i) {
    if (op.peer_recv_bytes(i) > limits::kMaxOpBytes) {
      return refuse(fmt::format("peer_recv_bytes[{}]", i), above(op.peer_recv_bytes(i), limits::kMaxOpBytes, "bytes"));
    }
  }
  return {};
}

}  // namespace collide::traces
