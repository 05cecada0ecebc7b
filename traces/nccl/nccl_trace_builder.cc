#include "traces/nccl/nccl_trace_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "traces/op_types.h"

namespace collide::traces::nccl {
namespace {

bool has_root(v1::OpKind kind) {
  switch (kind) {
    case v1::OP_KIND_BROADCAST:
    case v1::OP_KIND_REDUCE:
    case v1::OP_KIND_GATHER:
    case v1::OP_KIND_SCATTER:
    case v1::OP_KIND_SEND:
    case v1::OP_KIND_RECV:
      return true;
    default:
      return false;
  }
}

bool reduces(v1::OpKind kind) {
  return kind == v1::OP_KIND_ALL_REDUCE || kind == v1::OP_KIND_REDUCE ||
         kind == v1::OP_KIND_REDUCE_SCATTER;
}

}  // namespace

NcclTraceBuilder::NcclTraceBuilder(const ImportOptions& options) : options_(options) {
  for (size_t t = 0; t < element_size_.size(); ++t) {
    element_size_[t] = datatype_size(static_cast<v1::DataType>(t));
  }
}

void NcclTraceBuilder::start_file(const std::string& name) {
  files_.push_back(name);
  line_base_ = 0;
  file_nccl_lines_ = 0;
}

Status NcclTraceBuilder::problem(uint64_t line, std::string what) {
  const std::string where = fmt::format("{}:{}", files_.back(), line);
  if (options_.strict) return invalid_argument(fmt::format("{}: {}", where, what));
  report_.add_problem(options_, where, std::move(what));
  return {};
}

uint32_t NcclTraceBuilder::slot_of(uint32_t process, int32_t dev) {
  const auto [it, inserted] =
      slot_index_.try_emplace(dev_key(process, dev), static_cast<uint32_t>(slot_process_.size()));
  if (inserted) {
    slot_process_.push_back(process);
    slot_dev_.push_back(dev);
    slot_state_.emplace_back();
  }
  return it->second;
}

Status NcclTraceBuilder::add(const ParsedLog& piece, OpSink* ops) {
  sink_ = ops != nullptr ? ops : &ops_;
  // Our own process numbers for the piece's, copying host names (the piece's text goes away).
  piece_process_.resize(piece.processes.size());
  for (size_t i = 0; i < piece.processes.size(); ++i) {
    const ProcessRef& ref = piece.processes[i];
    auto& by_pid = process_index_[std::string(ref.host)];
    const auto [it, inserted] =
        by_pid.try_emplace(ref.pid, static_cast<uint32_t>(processes_.size()));
    if (inserted) processes_.push_back({std::string(ref.host), ref.pid, {}});
    piece_process_[i] = it->second;
  }
  // Records in input order: collectives are the bulk, the rest are merged in by sequence number.
  size_t ci = 0, ii = 0, gi = 0, vi = 0, pi = 0;
  constexpr uint64_t kNone = UINT64_MAX;
  while (true) {
    const uint64_t next_init = ii < piece.inits.size() ? piece.inits[ii].seq : kNone;
    const uint64_t next_graph = gi < piece.graphs.size() ? piece.graphs[gi].seq : kNone;
    const uint64_t next_version = vi < piece.versions.size() ? piece.versions[vi].seq : kNone;
    const uint64_t next_problem = pi < piece.problems.size() ? piece.problems[pi].seq : kNone;
    const uint64_t other = std::min({next_init, next_graph, next_version, next_problem});
    for (; ci < piece.colls.size() && piece.colls[ci].seq < other; ++ci) {
      const CollRecord& rec = piece.colls[ci];
      if (!on_coll(rec, piece_process_[rec.process])) {
        COLLIDE_RETURN_IF_ERROR(unknown_comm(rec, piece_process_[rec.process]));
      }
    }
    if (other == kNone) break;
    if (other == next_init) {
      const InitRecord& rec = piece.inits[ii++];
      COLLIDE_RETURN_IF_ERROR(on_init(rec, piece_process_[rec.process]));
    } else if (other == next_graph) {
      const GraphRecord& rec = piece.graphs[gi++];
      on_graph(rec, piece_process_[rec.process]);
    } else if (other == next_version) {
      const VersionRecord& rec = piece.versions[vi++];
      if (header_.nccl_version().empty()) header_.set_nccl_version(rec.version);
    } else {
      const ParseProblem& p = piece.problems[pi++];
      COLLIDE_RETURN_IF_ERROR(problem(line_base_ + p.line, p.what));
    }
  }
  line_base_ += piece.lines;
  file_nccl_lines_ += piece.nccl_lines;
  report_.units_read += piece.lines;
  return {};
}

Status NcclTraceBuilder::end_file() {
  if (file_nccl_lines_ == 0) {
    return problem(1,
                   "no NCCL log lines in this file (expected NCCL_DEBUG=INFO output with "
                   "`NCCL INFO` lines)");
  }
  return {};
}

Status NcclTraceBuilder::on_init(const InitRecord& rec, uint32_t process) {
  const CommKey k{process, rec.comm};
  auto it = live_.find(k);
  uint32_t index;
  if (it != live_.end() && !members_[it->second].complete &&
      members_[it->second].rank == rec.rank) {
    index = it->second;  // the COMPLETE line of a comm announced by an earlier info line
  } else {
    index = static_cast<uint32_t>(members_.size());
    members_.emplace_back();
    live_[k] = index;
    if (process_comms_.size() <= process) process_comms_.resize(process + 1);
    auto& comms = process_comms_[process];
    const auto same = std::find_if(comms.begin(), comms.end(),
                                   [&](const auto& c) { return c.first == rec.comm; });
    if (same != comms.end()) {
      same->second = index;
    } else {
      comms.emplace_back(rec.comm, index);
    }
  }
  last_member_ = UINT32_MAX;
  Member& m = members_[index];
  m.process = process;
  m.comm = rec.comm;
  m.rank = rec.rank;
  m.nranks = rec.nranks;
  if (rec.cuda_dev >= 0 || m.cuda_dev < 0) m.cuda_dev = rec.cuda_dev;
  if (!rec.comm_id.empty()) m.comm_id = rec.comm_id;
  if (rec.split) {
    m.split = true;
    m.color = rec.color;
  }
  if (rec.stage == InitStage::kComplete) {
    m.complete = true;
    // GRAPH lines this thread printed while the comm was being set up.
    auto pending = pending_graph_.find(dev_key(process, rec.prefix_dev));
    if (pending != pending_graph_.end()) {
      for (GraphRecord& g : pending->second) m.graph.push_back(std::move(g));
      pending_graph_.erase(pending);
    }
  }
  m.slot = slot_of(process, m.cuda_dev);
  return {};
}

void NcclTraceBuilder::on_graph(const GraphRecord& rec, uint32_t process) {
  if (rec.kind == GraphKind::kNics) {
    Process& p = processes_[process];
    if (p.nics.empty()) p.nics = rec.nics;
    return;
  }
  pending_graph_[dev_key(process, rec.prefix_dev)].push_back(rec);
}

Status NcclTraceBuilder::unknown_comm(const CollRecord& rec, uint32_t process) {
  const Process& p = processes_[process];
  return problem(line_base_ + rec.line,
                 fmt::format("{} on comm {:#x} of {}:{} before any init line of that comm",
                             op_kind_name(rec.kind), rec.comm, p.host, p.pid));
}

bool NcclTraceBuilder::on_coll(const CollRecord& rec, uint32_t process) {
  uint32_t member = last_member_;
  if (process != last_process_ || rec.comm != last_comm_ || member == UINT32_MAX) {
    member = UINT32_MAX;
    if (process < process_comms_.size() && process_comms_[process].size() <= kScannedComms) {
      for (const auto& [comm, m] : process_comms_[process]) {
        if (comm == rec.comm) member = m;
      }
    } else {
      const auto it = live_.find(CommKey{process, rec.comm});
      if (it != live_.end()) member = it->second;
    }
    if (member == UINT32_MAX) return false;
    last_member_ = member;
    last_process_ = process;
    last_comm_ = rec.comm;
  }
  // Everything but the rank and communicator (known once all init lines are in) is known now.
  // Every field append() reads is set here, in a reused struct: zeroing a fresh one per op cost a
  // quarter of this function.
  OpWireFields& op = op_fields_;
  op.index = slot_state_[members_[member].slot].next_index++;
  op.kind = rec.kind;
  op.count = rec.count;
  op.datatype = rec.datatype;
  op.bytes = rec.count * element_size_[static_cast<uint8_t>(rec.datatype)];
  op.root = has_root(rec.kind) ? rec.root : -1;
  op.reduce_op = reduces(rec.kind) ? std::min(rec.red_op, 5) + 1 : 0;
  op.has_enqueue_time = rec.has_time;
  op.enqueue_time_ns = rec.time_ns;
  op.op_count = rec.op_count;
  op.source_line = line_base_ + rec.line;
  op.source_file = static_cast<uint32_t>(files_.size() - 1);
  // NCCL gives the point-to-point ops of one group call the same opCount.
  if (rec.kind == v1::OP_KIND_SEND || rec.kind == v1::OP_KIND_RECV) {
    SlotState& s = slot_state_[members_[member].slot];
    if (s.member != member || s.op_count != rec.op_count || s.group == 0) {
      s.group = next_group_id_++;
      s.member = member;
      s.op_count = rec.op_count;
    }
    op.group = s.group;
  } else {
    slot_state_[members_[member].slot].group = 0;
    op.group = 0;
  }
  sink_->append(member, op);
  ++op_total_;
  return true;
}

Status NcclTraceBuilder::assign_global_ranks() {
  const size_t slots = slot_process_.size();
  int32_t largest = 0;
  for (const Member& m : members_) largest = std::max(largest, m.nranks);
  std::vector<int64_t> world_rank(slots, -1);
  for (const Member& m : members_) {
    if (m.nranks == largest && world_rank[m.slot] < 0) world_rank[m.slot] = m.rank;
  }
  slot_global_.assign(slots, UINT32_MAX);
  std::set<uint32_t> used;
  for (size_t s = 0; s < slots; ++s) {
    if (world_rank[s] >= 0 && used.insert(static_cast<uint32_t>(world_rank[s])).second) {
      slot_global_[s] = static_cast<uint32_t>(world_rank[s]);
    }
  }
  uint32_t next_free = 0;
  for (size_t s = 0; s < slots; ++s) {
    if (slot_global_[s] != UINT32_MAX) continue;
    while (used.count(next_free) != 0) ++next_free;
    slot_global_[s] = next_free;
    used.insert(next_free);
  }
  return {};
}

Status NcclTraceBuilder::group_communicators() {
  // Buckets: (commId) or (nranks, split color, ordinal of that kind within the rank).
  using BucketKey = std::tuple<std::string, int32_t, int64_t, uint32_t>;
  std::map<BucketKey, std::vector<uint32_t>> buckets;
  std::vector<BucketKey> bucket_order;
  std::map<std::tuple<uint32_t, int32_t, bool, int64_t>, uint32_t> ordinals;
  for (uint32_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    BucketKey key;
    if (!m.comm_id.empty()) {
      key = {m.comm_id, m.nranks, 0, 0};
    } else {
      const uint32_t ordinal = ordinals[{m.slot, m.nranks, m.split, m.color}]++;
      key = {m.split ? "split" : "", m.nranks, m.color, ordinal};
    }
    auto [it, inserted] = buckets.try_emplace(key);
    if (inserted) bucket_order.push_back(key);
    it->second.push_back(i);
  }
  struct Group {
    uint32_t nranks;
    std::map<uint32_t, uint32_t> members;  // comm rank -> member (sparse: ranks may be missing)
    uint32_t first;                        // earliest member, for ordering
  };
  std::vector<Group> groups;
  for (const BucketKey& key : bucket_order) {
    std::vector<uint32_t> members = buckets[key];
    std::stable_sort(members.begin(), members.end(), [&](uint32_t a, uint32_t b) {
      return slot_global_[members_[a].slot] < slot_global_[members_[b].slot];
    });
    const size_t first_group = groups.size();
    for (uint32_t mi : members) {
      const uint32_t r = static_cast<uint32_t>(members_[mi].rank);
      size_t g = first_group;
      while (g < groups.size() && groups[g].members.count(r) != 0) ++g;
      if (g == groups.size()) {
        groups.push_back({static_cast<uint32_t>(std::get<1>(key)), {}, mi});
      }
      groups[g].members[r] = mi;
      groups[g].first = std::min(groups[g].first, mi);
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.first < b.first; });
  group_ids_.clear();
  const uint32_t world = header_.world_size();
  for (size_t g = 0; g < groups.size(); ++g) {
    v1::Communicator* comm = header_.add_communicators();
    comm->set_id(fmt::format("c{}", g));
    group_ids_.push_back(comm->id());
    std::vector<uint32_t> present;
    std::string missing;
    uint32_t expected = 0;
    uint32_t missing_count = 0;
    auto note_missing = [&](uint32_t from, uint32_t to) {  // comm ranks [from, to) are absent
      for (uint32_t r = from; r < to; ++r, ++missing_count) {
        if (missing_count < 8) missing += fmt::format("{}{}", missing.empty() ? "" : ",", r);
      }
      if (missing_count > 8 && missing.back() != '.') missing += ",...";
    };
    for (const auto& [r, mi] : groups[g].members) {
      note_missing(expected, r);
      expected = r + 1;
      members_[mi].group = static_cast<uint32_t>(g);
      comm->add_ranks(slot_global_[members_[mi].slot]);
      present.push_back(mi);
    }
    note_missing(expected, groups[g].nranks);
    const Member& first = members_[groups[g].first];
    if (groups[g].nranks == world && missing.empty()) {
      comm->set_name("world");
    } else if (first.split) {
      comm->set_name(fmt::format("split color {}", first.color));
    }
    if (!missing.empty()) {
      const Process& p = processes_[first.process];
      const std::string what = fmt::format(
          "communicator {} ({} ranks, comm {:#x} of {}:{}) lacks the init lines of comm ranks {}",
          comm->id(), groups[g].nranks, first.comm, p.host, p.pid, missing);
      if (options_.strict) return invalid_argument(what);
      report_.add_problem(options_, "(all inputs)", what);
    }
    add_graph(present, *comm);
  }
  return {};
}

void NcclTraceBuilder::add_graph(const std::vector<uint32_t>& members, v1::Communicator& comm) {
  const uint32_t n = static_cast<uint32_t>(comm.ranks_size());
  if (members.empty()) return;
  const uint32_t nranks = static_cast<uint32_t>(members_[members[0]].nranks);
  std::map<uint32_t, std::vector<uint32_t>> rings;
  std::map<uint32_t, std::map<uint32_t, int32_t>> next;  // channel -> rank -> next
  std::map<uint32_t, std::map<uint32_t, v1::TreeNode>> trees;
  for (uint32_t mi : members) {
    for (const GraphRecord& g : members_[mi].graph) {
      auto in_range = [nranks](int32_t v) { return v >= 0 && static_cast<uint32_t>(v) < nranks; };
      if (g.kind == GraphKind::kRingOrder && !g.truncated && g.values.size() == nranks) {
        std::vector<uint32_t> order;
        std::set<int32_t> seen;
        for (int32_t v : g.values) {
          if (in_range(v) && seen.insert(v).second) order.push_back(static_cast<uint32_t>(v));
        }
        if (order.size() == nranks) rings.try_emplace(g.channel, std::move(order));
      } else if (g.kind == GraphKind::kRingNeighbours && g.values.size() == 3 &&
                 in_range(g.values[1]) && in_range(g.values[2])) {
        next[g.channel][static_cast<uint32_t>(g.values[1])] = g.values[2];
      } else if (g.kind == GraphKind::kTree && g.values.size() == 5 && in_range(g.values[0])) {
        v1::TreeNode node;
        node.set_rank(static_cast<uint32_t>(g.values[0]));
        node.set_parent(in_range(g.values[1]) ? g.values[1] : -1);
        for (size_t d = 2; d < 5; ++d) {
          if (in_range(g.values[d])) node.add_children(static_cast<uint32_t>(g.values[d]));
        }
        trees[g.channel][node.rank()] = std::move(node);
      }
    }
  }
  // Ring orders that were not printed whole, rebuilt from every rank's neighbours.
  for (const auto& [channel, succ] : next) {
    if (rings.count(channel) != 0 || succ.size() != nranks) continue;
    std::vector<uint32_t> order;
    std::set<uint32_t> seen;
    uint32_t r = 0;
    while (order.size() < nranks && seen.insert(r).second) {
      order.push_back(r);
      r = static_cast<uint32_t>(succ.at(r));
    }
    if (order.size() == nranks && r == 0) rings.emplace(channel, std::move(order));
  }
  (void)n;
  for (auto& [channel, order] : rings) {
    v1::RingOrder* ring = comm.add_rings();
    ring->set_channel(channel);
    for (uint32_t r : order) ring->add_ranks(r);
  }
  for (auto& [channel, nodes] : trees) {
    v1::Tree* tree = comm.add_trees();
    tree->set_channel(channel);
    for (auto& [rank, node] : nodes) *tree->add_nodes() = std::move(node);
  }
}

Status NcclTraceBuilder::finish() {
  header_.set_source_format(v1::SOURCE_FORMAT_NCCL_LOG);
  for (const std::string& f : files_) header_.add_source_files(f);
  COLLIDE_RETURN_IF_ERROR(assign_global_ranks());
  uint32_t world = 0;
  for (uint32_t g : slot_global_) world = std::max(world, g + 1);
  header_.set_world_size(world);
  // Nodes: hosts in order of first appearance.
  std::map<std::string, uint32_t> nodes;
  std::vector<v1::RankInfo> infos(world);
  for (uint32_t s = 0; s < slot_global_.size(); ++s) {
    const Process& p = processes_[slot_process_[s]];
    const uint32_t node =
        nodes.try_emplace(p.host, static_cast<uint32_t>(nodes.size())).first->second;
    v1::RankInfo& info = infos[slot_global_[s]];
    info.set_rank(slot_global_[s]);
    info.set_host(p.host);
    info.set_pid(p.pid);
    info.set_device(slot_dev_[s]);
    info.set_node(node);
    for (const std::string& nic : p.nics) info.add_nics(nic);
  }
  for (uint32_t r = 0; r < world; ++r) {
    infos[r].set_rank(r);
    *header_.add_ranks() = std::move(infos[r]);
  }
  COLLIDE_RETURN_IF_ERROR(group_communicators());
  member_out_.clear();
  for (const Member& m : members_) member_out_.push_back({slot_global_[m.slot], m.group});
  group_fields_.clear();
  for (const std::string& id : group_ids_) {
    CommField field;
    if (!make_comm_field(id, field)) {
      group_fields_.clear();  // write_op then encodes each op's communicator
      break;
    }
    group_fields_.push_back(field);
  }
  report_.ops = op_total_;
  report_.ranks = world;
  report_.communicators = static_cast<uint32_t>(header_.communicators_size());
  return {};
}

void NcclTraceBuilder::fill_op(const PackedOpView& c, v1::Op& op) const {
  // The parts are fields of an Op in its wire format, so the library reads them back.
  op.Clear();
  op.MergeFromString(std::string(c.index_kind));
  op.MergeFromString(std::string(c.rest));
  const MemberOut& m = member_out_[c.member];
  op.set_rank(m.rank);
  op.set_comm(group_ids_[m.group]);
}

Status NcclTraceBuilder::write_ops(const std::function<Status(const v1::Op&)>& sink) const {
  v1::Op op;
  PackedOps::Reader reader(ops_, 0);
  PackedOpView c;
  for (size_t i = 0; i < ops_.size(); ++i) {
    reader.next(c);
    fill_op(c, op);
    COLLIDE_RETURN_IF_ERROR(sink(op));
  }
  return {};
}

bool NcclTraceBuilder::same_layout(const NcclTraceBuilder& other) const {
  auto same = [](const MemberOut& a, const MemberOut& b) {
    return a.rank == b.rank && a.group == b.group;
  };
  return header_.SerializeAsString() == other.header_.SerializeAsString() &&
         std::equal(member_out_.begin(), member_out_.end(), other.member_out_.begin(),
                    other.member_out_.end(), same) &&
         group_ids_ == other.group_ids_;
}

void NcclTraceBuilder::serialize_ops(size_t begin, size_t end, WireBuffer& out) const {
  serialize_packed(ops_, begin, end, out);
}

void NcclTraceBuilder::serialize_ops(const PackedOps& ops, WireBuffer& out) const {
  serialize_packed(ops, 0, ops.size(), out);
}

bool NcclTraceBuilder::write_op(uint32_t member, const OpWireFields& op, OpWriter& writer,
                                WireBuffer& out) const {
  if (member >= member_out_.size()) return false;
  const MemberOut& m = member_out_[member];
  if (!group_fields_.empty()) {
    out.set_end(writer.write(m.rank, group_fields_[m.group], op, out.reserve(OpWriter::kRoom)));
    return true;
  }
  const std::string& comm = group_ids_[m.group];
  char index_kind[kMaxIndexKindBytes];
  char rest[kMaxRestBytes];
  const char* index_kind_end = put_op_index_kind(op, index_kind);
  const char* rest_end = put_op_rest(op, rest);
  char* at = out.reserve(max_op_wire_size(comm.size()));
  out.set_end(write_delimited_op_from_parts(
      m.rank, comm, {index_kind, static_cast<size_t>(index_kind_end - index_kind)},
      {rest, static_cast<size_t>(rest_end - rest)}, at));
  return true;
}

void NcclTraceBuilder::serialize_packed(const PackedOps& ops, size_t begin, size_t end,
                                        WireBuffer& out) const {
  PackedOps::Reader reader(ops, begin);
  PackedOpView c;
  for (size_t i = begin; i < end && i < ops.size(); ++i) {
    reader.next(c);
    const MemberOut& m = member_out_[c.member];
    const std::string& comm = group_ids_[m.group];
    char* at = out.reserve(max_op_wire_size(comm.size()));
    out.set_end(write_delimited_op_from_parts(m.rank, comm, c.index_kind, c.rest, at));
  }
}

}  // namespace collide::traces::nccl
