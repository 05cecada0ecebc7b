#include "traces/aicb/aicb_expand.h"

#include <fmt/format.h>

namespace collide::traces::aicb {
namespace {

constexpr const char* kKindNames[] = {"tp", "dp", "pp", "ep", "dpep"};

}  // namespace

Expansion::Kind Expansion::group_kind(const Comm& c, Kind fallback) {
  switch (c.group) {
    case Group::kTp:
      return kTp;
    case Group::kDp:
      return kDp;
    case Group::kEp:
      return kEp;
    case Group::kDpEp:
      return kDpEp;
    case Group::kDefault:
      break;
  }
  return fallback;
}

uint32_t Expansion::group_size(Kind kind) const {
  switch (kind) {
    case kTp:
      return layout_.tp;
    case kDp:
      return layout_.dp;
    case kPp:
      return layout_.pp;
    case kEp:
      return layout_.ep;
    case kDpEp:
      return layout_.dp / layout_.ep;
    default:
      return 1;
  }
}

uint32_t Expansion::group_count(Kind kind) const {
  return layout_.world() / group_size(kind);
}

uint32_t Expansion::group_index(Kind kind, uint32_t rank) const {
  const Layout& l = layout_;
  const uint32_t s = l.stage(rank), d = l.dp_index(rank), t = l.tp_index(rank);
  switch (kind) {
    case kTp:
      return s * l.dp + d;
    case kDp:
      return s * l.tp + t;
    case kPp:
      return d * l.tp + t;
    case kEp:
      return (s * l.tp + t) * (l.dp / l.ep) + d / l.ep;
    case kDpEp:
      return (s * l.tp + t) * l.ep + d % l.ep;
    default:
      return 0;
  }
}

std::vector<uint32_t> Expansion::group_ranks(Kind kind, uint32_t index) const {
  const Layout& l = layout_;
  std::vector<uint32_t> ranks;
  switch (kind) {
    case kTp: {
      const uint32_t s = index / l.dp, d = index % l.dp;
      for (uint32_t t = 0; t < l.tp; ++t) ranks.push_back(s * l.tp * l.dp + d * l.tp + t);
      break;
    }
    case kDp: {
      const uint32_t s = index / l.tp, t = index % l.tp;
      for (uint32_t d = 0; d < l.dp; ++d) ranks.push_back(s * l.tp * l.dp + d * l.tp + t);
      break;
    }
    case kPp: {
      const uint32_t d = index / l.tp, t = index % l.tp;
      for (uint32_t s = 0; s < l.pp; ++s) ranks.push_back(s * l.tp * l.dp + d * l.tp + t);
      break;
    }
    case kEp: {
      const uint32_t blocks = l.dp / l.ep;
      const uint32_t st = index / blocks, b = index % blocks;
      const uint32_t s = st / l.tp, t = st % l.tp;
      for (uint32_t j = 0; j < l.ep; ++j)
        ranks.push_back(s * l.tp * l.dp + (b * l.ep + j) * l.tp + t);
      break;
    }
    case kDpEp: {
      const uint32_t st = index / l.ep, j = index % l.ep;
      const uint32_t s = st / l.tp, t = st % l.tp;
      for (uint32_t b = 0; b < l.dp / l.ep; ++b)
        ranks.push_back(s * l.tp * l.dp + (b * l.ep + j) * l.tp + t);
      break;
    }
    default:
      break;
  }
  return ranks;
}

Expansion::Member Expansion::member(Kind kind, uint32_t rank) const {
  Member m;
  m.comm = &comms_[first_comm_[kind] + group_index(kind, rank)];
  for (uint32_t i = 0; i < static_cast<uint32_t>(m.comm->ranks_size()); ++i) {
    if (m.comm->ranks(static_cast<int>(i)) == rank) m.position = i;
  }
  return m;
}

Result<Expansion> Expansion::create(const Workload& w, const ImportOptions& options,
                                    ImportReport& report) {
  Expansion e;
  e.workload_ = &w;
  Layout& l = e.layout_;
  l.tp = w.tp;
  l.pp = w.pp;
  l.ep = w.ep;
  uint32_t all = w.all_gpus;
  if (options.world_size != 0 && all != 0 && options.world_size != all) {
    return invalid_argument(fmt::format(
        "{}:1: all_gpus {} in the file, but the world size given is {}", w.file, all,
        options.world_size));
  }
  if (all == 0 && options.world_size != 0) {
    all = options.world_size;
    report.notes.push_back(fmt::format(
        "{}: line 1 has no all_gpus; {} GPUs as given (the world size option)", w.file, all));
  } else if (all == 0) {
    // Micro-test files (policy MICRO) never carry it; without it the data-parallel group, where
    // their collectives run, is one GPU and nothing reaches the network.
    all = w.tp * w.pp;
    const std::string what = fmt::format(
        "line 1 has no all_gpus; assuming tp x pp = {} GPUs, so no data parallelism and no "
        "data-parallel traffic; give the job's GPU count (collide trace import --world-size N)",
        all);
    if (options.strict) return invalid_argument(fmt::format("{}:1: {}", w.file, what));
    record_problem(report, options, w.file + ":1", what);
  }
  if (all % (w.tp * w.pp) != 0) {
    return invalid_argument(fmt::format("{}:1: all_gpus {} is not a multiple of tp {} x pp {}",
                                        w.file, all, w.tp, w.pp));
  }
  l.dp = all / (w.tp * w.pp);
  if (l.dp % l.ep != 0) {
    return invalid_argument(fmt::format(
        "{}:1: ep {} does not divide the data-parallel degree {} (all_gpus {} / (tp {} x pp {}))",
        w.file, l.ep, l.dp, all, w.tp, w.pp));
  }
  for (const Layer& layer : w.layers) {
    if (layer.fwd.kind != v1::OP_KIND_UNSPECIFIED) e.used_[group_kind(layer.fwd, kTp)] = true;
    if (layer.ig.kind != v1::OP_KIND_UNSPECIFIED) e.used_[group_kind(layer.ig, kTp)] = true;
    if (layer.wg.kind != v1::OP_KIND_UNSPECIFIED) e.used_[group_kind(layer.wg, kDp)] = true;
  }
  e.used_[kPp] = l.pp > 1 && w.pp_comm > 0;
  for (int k = 0; k < kKinds; ++k) {
    const auto kind = static_cast<Kind>(k);
    e.first_comm_[k] = static_cast<uint32_t>(e.comms_.size());
    if (!e.used_[k] || e.group_size(kind) < 2) {
      e.used_[k] = false;
      continue;
    }
    for (uint32_t g = 0; g < e.group_count(kind); ++g) {
      v1::Communicator c;
      c.set_id(fmt::format("{}{}", kKindNames[k], g));
      c.set_name(kKindNames[k]);
      for (uint32_t r : e.group_ranks(kind, g)) c.add_ranks(r);
      e.comms_.push_back(std::move(c));
    }
  }
  return e;
}

std::vector<v1::Op> Expansion::rank_ops(uint32_t rank) const {
  const Workload& w = *workload_;
  std::vector<v1::Op> ops;
  uint64_t pending = 0;
  bool has_pending = false;
  auto compute = [&](uint64_t ns) {
    pending += ns;
    has_pending = true;
  };
  auto emit = [&](v1::OpKind kind, Kind group, uint64_t file_bytes, int32_t root, std::string label,
                  uint32_t line) {
    if (!used_[group]) {
      return;  // a group of one rank: nothing crosses the network
    }
    const Member m = member(group, rank);
    const auto n = static_cast<uint64_t>(m.comm->ranks_size());
    v1::Op op;
    op.set_rank(rank);
    op.set_index(ops.size());
    op.set_kind(kind);
    op.set_comm(m.comm->id());
    uint64_t bytes = file_bytes;
    if (kind == v1::OP_KIND_ALL_GATHER || kind == v1::OP_KIND_REDUCE_SCATTER ||
        kind == v1::OP_KIND_ALL_TO_ALL) {
      bytes = file_bytes / n;
    }
    op.set_bytes(bytes);
    op.set_count(bytes);
    op.set_datatype(v1::DATA_TYPE_UINT8);
    if (kind == v1::OP_KIND_ALL_REDUCE || kind == v1::OP_KIND_REDUCE_SCATTER)
      op.set_reduce_op(v1::REDUCE_OP_SUM);
    op.set_root(root);
    if (has_pending) op.set_compute_before_ns(pending);
    pending = 0;
    has_pending = false;
    op.set_source(fmt::format("{}:{}", w.file, line));
    op.set_label(std::move(label));
    ops.push_back(std::move(op));
  };
  auto comm = [&](const Comm& c, Kind fallback, const Layer& layer, std::string_view phase) {
    if (c.kind == v1::OP_KIND_UNSPECIFIED) return;
    const Kind g = group_kind(c, fallback);
    emit(c.kind, g, c.bytes, c.kind == v1::OP_KIND_BROADCAST ? 0 : -1,
         fmt::format("{}.{}.{}", layer.name, phase, kKindNames[g]), layer.line);
  };
  const uint32_t stage = layout_.stage(rank);
  const bool pipeline = used_[kPp];
  const auto stage_root = [](uint32_t s) { return static_cast<int32_t>(s); };

  if (pipeline && stage > 0)
    emit(v1::OP_KIND_RECV, kPp, w.pp_comm, stage_root(stage - 1), "pp.fwd.recv", 1);
  for (const Layer& layer : w.layers) {
    compute(layer.fwd_compute);
    comm(layer.fwd, kTp, layer, "fwd");
  }
  if (pipeline && stage + 1 < layout_.pp)
    emit(v1::OP_KIND_SEND, kPp, w.pp_comm, stage_root(stage + 1), "pp.fwd.send", 1);
  if (pipeline && stage + 1 < layout_.pp)
    emit(v1::OP_KIND_RECV, kPp, w.pp_comm, stage_root(stage + 1), "pp.bwd.recv", 1);
  for (auto it = w.layers.rbegin(); it != w.layers.rend(); ++it) {
    compute(it->ig_compute);
    comm(it->ig, kTp, *it, "ig");
    compute(it->wg_compute);
    comm(it->wg, kDp, *it, "wg");
  }
  if (pipeline && stage > 0)
    emit(v1::OP_KIND_SEND, kPp, w.pp_comm, stage_root(stage - 1), "pp.bwd.send", 1);
  return ops;
}

void Expansion::describe(v1::TraceHeader& header) const {
  const Workload& w = *workload_;
  auto& md = *header.mutable_metadata();
  for (const auto& [key, value] : w.params) md["aicb." + key] = value;
  md["aicb.policy"] = w.policy;
  md["aicb.layers"] = std::to_string(w.layers.size());
  md["aicb.compute_unit"] = "ns";
  md["parallelism.tp"] = std::to_string(layout_.tp);
  md["parallelism.dp"] = std::to_string(layout_.dp);
  md["parallelism.pp"] = std::to_string(layout_.pp);
  md["parallelism.ep"] = std::to_string(layout_.ep);
  md["rank_layout"] = "megatron: rank = stage*tp*dp + dp_index*tp + tp_index";
}

}  // namespace collide::traces::aicb
