#include "traces/chakra/rank_converter.h"

#include <fmt/format.h>

#include <algorithm>

#include "traces/chakra/comm_size.h"
#include "traces/chakra/node_attrs.h"

namespace collide::traces::chakra {

using ChakraProtoMsg::Node;

CommIndex make_comm_index(std::string id, std::vector<uint32_t> ranks) {
  CommIndex index;
  index.id = std::move(id);
  index.ranks = std::move(ranks);
  for (uint32_t i = 0; i < index.ranks.size(); ++i) index.position.emplace(index.ranks[i], i);
  return index;
}

Result<v1::OpKind> op_kind_from_comm_type(int64_t comm_type) {
  switch (comm_type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return v1::OP_KIND_ALL_REDUCE;
    case ChakraProtoMsg::REDUCE:
      return v1::OP_KIND_REDUCE;
    case ChakraProtoMsg::ALL_GATHER:
      return v1::OP_KIND_ALL_GATHER;
    case ChakraProtoMsg::GATHER:
      return v1::OP_KIND_GATHER;
    case ChakraProtoMsg::SCATTER:
      return v1::OP_KIND_SCATTER;
    case ChakraProtoMsg::BROADCAST:
      return v1::OP_KIND_BROADCAST;
    case ChakraProtoMsg::ALL_TO_ALL:
      return v1::OP_KIND_ALL_TO_ALL;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
      return v1::OP_KIND_REDUCE_SCATTER;
    case ChakraProtoMsg::BARRIER:
      return v1::OP_KIND_BARRIER;
    default:
      return invalid_argument(fmt::format("unknown comm_type {}", comm_type));
  }
}

Result<ChakraProtoMsg::CollectiveCommType> comm_type_from_op_kind(v1::OpKind kind) {
  switch (kind) {
    case v1::OP_KIND_ALL_REDUCE:
      return ChakraProtoMsg::ALL_REDUCE;
    case v1::OP_KIND_REDUCE:
      return ChakraProtoMsg::REDUCE;
    case v1::OP_KIND_ALL_GATHER:
      return ChakraProtoMsg::ALL_GATHER;
    case v1::OP_KIND_GATHER:
      return ChakraProtoMsg::GATHER;
    case v1::OP_KIND_SCATTER:
      return ChakraProtoMsg::SCATTER;
    case v1::OP_KIND_BROADCAST:
      return ChakraProtoMsg::BROADCAST;
    case v1::OP_KIND_ALL_TO_ALL:
    case v1::OP_KIND_ALL_TO_ALLV:
      return ChakraProtoMsg::ALL_TO_ALL;
    case v1::OP_KIND_REDUCE_SCATTER:
      return ChakraProtoMsg::REDUCE_SCATTER;
    case v1::OP_KIND_BARRIER:
      return ChakraProtoMsg::BARRIER;
    default:
      return invalid_argument(
          fmt::format("op kind {} has no Chakra comm_type", static_cast<int>(kind)));
  }
}

bool has_root(v1::OpKind kind) {
  return kind == v1::OP_KIND_BROADCAST || kind == v1::OP_KIND_REDUCE ||
         kind == v1::OP_KIND_GATHER || kind == v1::OP_KIND_SCATTER;
}

RankConverter::RankConverter(uint32_t rank, const CommTable* comms, std::string file)
    : rank_(rank), comms_(comms), file_(std::move(file)) {}

void RankConverter::resolve(const google::protobuf::RepeatedField<uint64_t>& ids,
                            std::vector<uint64_t>& out) {
  for (uint64_t id : ids) {
    auto it = known_.find(id);
    if (it == known_.end()) {
      ++forward_refs_;
      continue;
    }
    if (it->second.is_op) {
      out.push_back(it->second.op_index);
    } else {
      out.insert(out.end(), it->second.deps.begin(), it->second.deps.end());
    }
  }
}

void RankConverter::remember_passthrough(const Node& node) {
  Known known;
  resolve(node.ctrl_deps(), known.deps);
  resolve(node.data_deps(), known.deps);
  std::sort(known.deps.begin(), known.deps.end());
  known.deps.erase(std::unique(known.deps.begin(), known.deps.end()), known.deps.end());
  known_[node.id()] = std::move(known);
}

Result<std::optional<v1::Op>> RankConverter::add(const Node& node, uint64_t record) {
  const bool is_comm = node.type() == ChakraProtoMsg::COMM_COLL_NODE ||
                       node.type() == ChakraProtoMsg::COMM_SEND_NODE ||
                       node.type() == ChakraProtoMsg::COMM_RECV_NODE;
  if (is_comm && is_host_side_comm(node)) {
    ++host_side_;
    remember_passthrough(node);
    return std::optional<v1::Op>();
  }
  if (!is_comm) {
    if (node.type() == ChakraProtoMsg::COMP_NODE && !flag_attr(node, "is_cpu_op")) {
      const uint64_t micros = node.duration_micros();
      // Saturate rather than wrap on absurd durations.
      pending_compute_ns_ = micros > (UINT64_MAX - pending_compute_ns_) / 1000
                                ? UINT64_MAX
                                : pending_compute_ns_ + micros * 1000;
      has_pending_compute_ = true;
    }
    remember_passthrough(node);
    return std::optional<v1::Op>();
  }
  auto op = make_op(node, record);
  if (!op.ok()) {
    // Unusable, but later nodes may still depend on it: they inherit its dependencies.
    remember_passthrough(node);
    return invalid_argument(fmt::format("{}: record {} (node {}): {}", file_, record, node.id(),
                                        op.status().message()));
  }
  return op;
}

Result<std::optional<v1::Op>> RankConverter::make_op(const Node& node, uint64_t record) {
  v1::Op op;
  bool ints_ok = true;
  const auto size = int_attr(node, "comm_size", ints_ok);
  const auto pg = string_attr(node, "pg_name");
  const std::string comm_name = pg && !pg->empty() ? *pg : kWorldCommunicator;
  auto comm_it = comms_->find(comm_name);
  if (comm_it == comms_->end()) {
    return invalid_argument(fmt::format("unknown process group '{}'", comm_name));
  }
  const CommIndex& comm = comm_it->second;
  if (!comm.position.contains(rank_)) {
    return invalid_argument(
        fmt::format("rank {} is not a member of process group '{}'", rank_, comm_name));
  }
  op.set_comm(comm.id);
  if (node.type() == ChakraProtoMsg::COMM_COLL_NODE) {
    const auto type = int_attr(node, "comm_type", ints_ok);
    if (!type) return invalid_argument(std::string("collective without a comm_type"));
    auto kind = op_kind_from_comm_type(*type);
    if (!kind.ok()) return kind.status();
    op.set_kind(*kind);
    op.set_root(-1);
    if (has_root(*kind)) {
      const auto root = int_attr(node, "root", ints_ok);
      op.set_root(static_cast<int32_t>(root.value_or(0)));
      if (root && (*root < 0 || static_cast<uint64_t>(*root) >= comm.ranks.size())) {
        return invalid_argument(fmt::format("root {} outside process group '{}' of {} ranks", *root,
                                            comm_name, comm.ranks.size()));
      }
    }
  } else {
    const bool send = node.type() == ChakraProtoMsg::COMM_SEND_NODE;
    op.set_kind(send ? v1::OP_KIND_SEND : v1::OP_KIND_RECV);
    const auto peer = int_attr(node, send ? "comm_dst" : "comm_src", ints_ok);
    if (!peer) {
      return invalid_argument(
          fmt::format("{} without {}", send ? "send" : "recv", send ? "comm_dst" : "comm_src"));
    }
    auto pos = *peer < 0 || *peer > UINT32_MAX ? comm.position.end()
                                               : comm.position.find(static_cast<uint32_t>(*peer));
    if (pos == comm.position.end()) {
      return invalid_argument(
          fmt::format("peer rank {} is not in process group '{}'", *peer, comm_name));
    }
    op.set_root(static_cast<int32_t>(pos->second));
  }
  if (!ints_ok) {
    return invalid_argument(std::string("an integer attribute holds a non-integer value"));
  }
  if (!size && op.kind() != v1::OP_KIND_BARRIER) {
    return invalid_argument(std::string("no comm_size"));
  }
  if (size && *size < 0) return invalid_argument(fmt::format("comm_size {} is negative", *size));
  // comm_size is not always Op.bytes: comm_size.h says, kind by kind, what it means.
  auto bytes = op_bytes_from_comm_size(op.kind(), static_cast<uint64_t>(size.value_or(0)),
                                       static_cast<uint32_t>(comm.ranks.size()));
  if (!bytes.ok()) return bytes.status();

  // Everything checked: from here the node is an op.
  op.set_rank(rank_);
  op.set_index(next_index_);
  op.set_bytes(*bytes);
  op.set_count(*bytes);
  op.set_datatype(v1::DATA_TYPE_UINT8);
  if (node.start_time_micros() != 0) {
    op.set_enqueue_time_ns(node.start_time_micros() > UINT64_MAX / 1000
                               ? UINT64_MAX
                               : node.start_time_micros() * 1000);
  }
  if (has_pending_compute_) op.set_compute_before_ns(pending_compute_ns_);
  pending_compute_ns_ = 0;
  has_pending_compute_ = false;

  std::vector<uint64_t> deps;
  resolve(node.ctrl_deps(), deps);
  if (next_index_ > 0) std::erase(deps, next_index_ - 1);
  resolve(node.data_deps(), deps);
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  for (uint64_t d : deps) op.add_deps(d);
  op.set_source(fmt::format("{}:record {}", file_, record));
  op.set_label(node.name());

  Known known;
  known.is_op = true;
  known.op_index = next_index_;
  known_[node.id()] = std::move(known);
  ++next_index_;
  return std::optional<v1::Op>(std::move(op));
}

}  // namespace collide::traces::chakra
