#include "orchestrator/scenario/incast_workload.h"

#include <algorithm>

#include <fmt/format.h>

namespace collide::orchestrator {

std::optional<IncastProblem> incast_problem(const v1::Incast& incast, uint32_t world) {
  if (incast.senders() < kMinIncastSenders || incast.senders() > kMaxIncastSenders) {
    return IncastProblem{"workload.incast.senders", fmt::format("{} is not in {}..{}", incast.senders(),
                                                                kMinIncastSenders, kMaxIncastSenders)};
  }
  if (incast.bytes() == 0) return IncastProblem{"workload.incast.bytes", "needs a size in bytes"};
  if (world < incast.senders() + 1) {
    return IncastProblem{"workload.incast.senders",
                         fmt::format("{} senders and a receiver need {} ranks, but the job has {}",
                                     incast.senders(), incast.senders() + 1, world)};
  }
  if (incast.receiver() >= world) {
    return IncastProblem{"workload.incast.receiver",
                         fmt::format("rank {} is not in a job of {} ranks", incast.receiver(), world)};
  }
  return std::nullopt;
}

Status check_incast(const v1::Incast& incast, uint32_t world) {
  if (auto p = incast_problem(incast, world)) return invalid_argument(p->field + ": " + p->what);
  return {};
}

std::vector<uint32_t> incast_senders(const v1::Incast& incast, uint32_t world, uint32_t ranks_per_host) {
  const uint32_t per_host = std::max(1u, ranks_per_host);
  const uint32_t receiver = incast.receiver();
  std::vector<uint32_t> remote, local;
  for (uint32_t step = 1; step < world; ++step) {
    const uint32_t rank = (receiver + step) % world;
    (rank / per_host == receiver / per_host ? local : remote).push_back(rank);
  }
  remote.insert(remote.end(), local.begin(), local.end());
  remote.resize(std::min<size_t>(remote.size(), incast.senders()));
  return remote;
}

std::vector<v1::Op> incast_ops(const v1::Incast& incast, uint32_t world, uint32_t ranks_per_host,
                               uint64_t bytes, uint32_t iterations) {
  const std::vector<uint32_t> senders = incast_senders(incast, world, ranks_per_host);
  const uint32_t receiver = incast.receiver();
  const uint32_t count = std::max(1u, incast.count());
  std::vector<v1::Op> ops;
  auto op_of = [&](uint32_t rank, uint64_t index, v1::OpKind kind, uint32_t peer, uint32_t it,
                   uint32_t group) {
    v1::Op op;
    op.set_rank(rank);
    op.set_index(index);
    op.set_kind(kind);
    op.set_comm("world");  // every rank, in rank order: comm ranks are global ranks
    op.set_datatype(v1::DATA_TYPE_BFLOAT16);
    op.set_count(bytes / 2);
    op.set_bytes(bytes);
    op.set_root(static_cast<int32_t>(peer));
    op.set_iteration(it);
    op.set_group(group);
    op.set_label(kind == v1::OP_KIND_SEND ? "incast.send" : "incast.recv");
    return op;
  };
  // The receiver: a group of receives per incast (group ids from 1; 0 means "no group").
  uint64_t index = 0;
  uint32_t group = 0;
  for (uint32_t it = 0; it < iterations; ++it) {
    for (uint32_t k = 0; k < count; ++k) {
      ++group;
      for (uint32_t s : senders) ops.push_back(op_of(receiver, index++, v1::OP_KIND_RECV, s, it, group));
    }
  }
  for (uint32_t s : senders) {
    index = 0;
    for (uint32_t it = 0; it < iterations; ++it) {
      for (uint32_t k = 0; k < count; ++k) {
        ops.push_back(op_of(s, index++, v1::OP_KIND_SEND, receiver, it, 0));
      }
    }
  }
  std::stable_sort(ops.begin(), ops.end(), [](const v1::Op& a, const v1::Op& b) { return a.rank() < b.rank(); });
  return ops;
}

}  // namespace collide::orchestrator
