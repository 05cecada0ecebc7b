#include "traces/nccl/nccl_trace_builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "traces/nccl/comm_inference.h"
#include "traces/nccl/tuning_hints.h"
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

Status NcclTraceBuilder::problem_in(uint32_t file, uint64_t line, std::string what) {
  const std::string where = fmt::format("{}:{}", files_[file], line);
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
    if (inserted) processes_.push_back({std::string(ref.host), ref.pid, {}, {}, ref.device});
    piece_process_[i] = it->second;
    if (processes_[it->second].device < 0) processes_[it->second].device = ref.device;
    std::vector<uint32_t>& files = processes_[it->second].files;
    const auto file = static_cast<uint32_t>(files_.size() - 1);
    if (files.empty() || files.back() != file) files.push_back(file);
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
        COLLIDE_RETURN_IF_ERROR(orphan(rec, piece_process_[rec.process]));
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
  merge_tunings(piece.tunings, tunings_);
  for (const UnreadKind& k : piece.unread) add_unread(k);
  line_base_ += piece.lines;
  file_nccl_lines_ += piece.nccl_lines;
  report_.units_read += piece.lines;
  return {};
}

void NcclTraceBuilder::add_unread(const UnreadKind& k) {
  std::vector<UnreadLines>& kinds = report_.unread;
  std::string_view kind = k.kind;
  for (int pass = 0; pass < 2; ++pass) {
    for (UnreadLines& u : kinds) {
      if (u.kind == kind) {
        u.lines += k.lines;
        return;
      }
    }
    if (kinds.size() + 1 < kMaxUnreadKinds || kind == "other kinds") break;
    kind = "other kinds";
  }
  kinds.push_back({std::string(kind), k.lines,
                   fmt::format("{}:{}", files_.back(), line_base_ + k.first_line), k.example});
}

bool NcclTraceBuilder::extends_tuning(const ParsedLog& piece) const {
  return extends_tunings(piece.tunings, tunings_);
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
  if (!seen_init_) {
    seen_init_ = true;
    COLLIDE_RETURN_IF_ERROR(report_orphans());
  }
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

namespace {

std::string before_init(const CollRecord& rec, const std::string& host, uint32_t pid) {
  return fmt::format("{} on comm {:#x} of {}:{} before any init line of that comm",
                     op_kind_name(rec.kind), rec.comm, host, pid);
}

}  // namespace

Status NcclTraceBuilder::unknown_comm(const CollRecord& rec, uint32_t process) {
  const Process& p = processes_[process];
  return problem(line_base_ + rec.line, before_init(rec, p.host, p.pid));
}

Status NcclTraceBuilder::orphan(const CollRecord& rec, uint32_t process) {
  if (seen_init_) return unknown_comm(rec, process);
  Orphan& o = orphans_.emplace_back(Orphan{rec, static_cast<uint32_t>(files_.size() - 1)});
  o.rec.line = line_base_ + rec.line;
  o.rec.process = process;
  return {};
}

Status NcclTraceBuilder::report_orphans() {
  for (const Orphan& o : orphans_) {
    const Process& p = processes_[o.rec.process];
    COLLIDE_RETURN_IF_ERROR(problem_in(o.file, o.rec.line, before_init(o.rec, p.host, p.pid)));
  }
  orphans_.clear();
  orphans_.shrink_to_fit();
  return {};
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
    // (The first op of a member always comes here: a new member resets the cache.)
    Member& m = members_[member];
    if (m.first_op_count == UINT64_MAX) m.first_op_count = rec.op_count;
    last_member_ = member;
    last_process_ = process;
    last_comm_ = rec.comm;
  }
  append_op(rec, member, line_base_ + rec.line, static_cast<uint32_t>(files_.size() - 1));
  return true;
}

inline void NcclTraceBuilder::append_op(const CollRecord& rec, uint32_t member, uint64_t line,
                                        uint32_t file) {
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
  op.source_line = line;
  op.source_file = file;
  // NCCL gives the point-to-point ops of one group call the same opCount.
  if (rec.kind == v1::OP_KIND_SEND || rec.kind == v1::OP_KIND_RECV) {
    SlotState& s = slot_state_[members_[member].slot];
    members_[member].p2p = true;
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
  // Two whole communicators of the largest size without a process in common are two jobs' (or
  // two runs') logs, which no one world can hold.
  uint32_t largest = 0;
  for (const Group& g : groups) largest = std::max(largest, g.nranks);
  const Group* first_world = nullptr;
  std::set<uint32_t> first_processes;
  for (const Group& g : groups) {
    if (g.nranks != largest || g.members.size() != largest) continue;
    std::set<uint32_t> processes;
    for (const auto& [r, mi] : g.members) processes.insert(members_[mi].process);
    if (first_world == nullptr) {
      first_world = &g;
      first_processes = std::move(processes);
      continue;
    }
    const bool disjoint = std::none_of(processes.begin(), processes.end(),
                                       [&](uint32_t p) { return first_processes.count(p) != 0; });
    if (disjoint) {
      return invalid_argument(fmt::format(
          "the logs hold more than one job: two whole communicators of {} ranks with no process "
          "in common ({} and {}); import each job's logs on their own",
          largest, files_of(first_processes), files_of(processes)));
    }
  }
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
    if (missing_count > 0) comm->set_declared_size(groups[g].nranks);
    const Member& first = members_[groups[g].first];
    if (groups[g].nranks == world && missing.empty()) {
      comm->set_name("world");
    } else if (first.split) {
      comm->set_name(fmt::format("split color {}", first.color));
    }
    // Inferred communicators lack ranks the logs never show; finish() says which, once.
    if (!missing.empty() && !first.inferred) {
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

std::string NcclTraceBuilder::files_of(const std::set<uint32_t>& processes) const {
  std::set<uint32_t> files;
  for (uint32_t p : processes) files.insert(processes_[p].files.begin(), processes_[p].files.end());
  std::string names;
  for (uint32_t f : files) names += fmt::format("{}{}", names.empty() ? "" : ", ", files_[f]);
  return names;
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

namespace {

// "0-3,8,10-11" of sorted numbers.
std::string number_ranges(const std::vector<uint32_t>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

Status NcclTraceBuilder::infer_layout() {
  // Processes that printed collectives, in order of host, then device, then pid.
  std::vector<uint32_t> order;
  std::vector<uint32_t> position(processes_.size(), UINT32_MAX);
  for (const Orphan& o : orphans_) {
    if (position[o.rec.process] == UINT32_MAX) {
      position[o.rec.process] = 0;
      order.push_back(o.rec.process);
    }
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Process& x = processes_[a];
    const Process& y = processes_[b];
    return std::tie(x.host, x.device, x.pid) < std::tie(y.host, y.device, y.pid);
  });
  for (uint32_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  // One sighting per (process, comm pointer).
  std::unordered_map<CommKey, uint32_t, CommKeyHash> sighting_of;
  std::vector<CommSighting> sightings;
  std::vector<CommKey> sighting_key;
  std::vector<uint32_t> orphan_sighting(orphans_.size());
  for (size_t i = 0; i < orphans_.size(); ++i) {
    const CollRecord& rec = orphans_[i].rec;
    const CommKey key{rec.process, rec.comm};
    const auto [it, inserted] =
        sighting_of.try_emplace(key, static_cast<uint32_t>(sightings.size()));
    if (inserted) {
      sightings.push_back({position[rec.process], -1, {}});
      sighting_key.push_back(key);
    }
    CommSighting& s = sightings[it->second];
    s.nranks = std::max(s.nranks, rec.nranks);
    if (rec.kind != v1::OP_KIND_SEND && rec.kind != v1::OP_KIND_RECV) {
      const bool same = !s.colls.empty() && s.colls.back().op_count == rec.op_count;
      const uint32_t occurrence = same ? s.colls.back().occurrence + 1 : 0;
      s.colls.push_back({rec.op_count, occurrence, rec.count, rec.kind, rec.datatype});
    }
    orphan_sighting[i] = it->second;
  }
  for (const CommSighting& s : sightings) nranks_printed_ = nranks_printed_ || s.nranks > 0;
  const InferredLayout layout = infer_comms(sightings, static_cast<uint32_t>(order.size()));
  if (!layout.other_worlds.empty()) {
    auto files_of_comm = [&](const InferredComm& comm) {
      std::set<uint32_t> processes;
      for (uint32_t s : comm.sightings) processes.insert(sighting_key[s].process);
      return files_of(processes);
    };
    const InferredComm& world = layout.comms[layout.world];
    const InferredComm& other = layout.comms[layout.other_worlds[0]];
    return invalid_argument(fmt::format(
        "the logs hold more than one job: two communicators of {} ranks with no process in "
        "common and collectives that disagree at the same opCount ({} and {}); import each "
        "job's logs on their own",
        world.nranks, files_of_comm(world), files_of_comm(other)));
  }
  // Ranks in that order; then members as init lines would have given them.
  for (uint32_t p : order) slot_of(p, processes_[p].device);
  slot_global_.assign(slot_process_.size(), 0);
  for (uint32_t s = 0; s < slot_process_.size(); ++s) {
    slot_global_[s] = layout.rank[position[slot_process_[s]]];
  }
  std::vector<uint32_t> member_of(sightings.size());
  for (size_t c = 0; c < layout.comms.size(); ++c) {
    const InferredComm& comm = layout.comms[c];
    for (size_t r = 0; r < comm.sightings.size(); ++r) {
      const CommKey& key = sighting_key[comm.sightings[r]];
      member_of[comm.sightings[r]] = static_cast<uint32_t>(members_.size());
      Member& m = members_.emplace_back();
      m.process = key.process;
      m.comm = key.comm;
      m.rank = static_cast<int32_t>(r);
      m.nranks = static_cast<int32_t>(comm.nranks);
      m.complete = true;
      m.inferred = true;
      m.comm_id = fmt::format("inferred {}", c);
      m.cuda_dev = processes_[key.process].device;
      m.slot = slot_of(key.process, m.cuda_dev);
    }
  }
  for (size_t i = 0; i < orphans_.size(); ++i) {
    const Orphan& o = orphans_[i];
    Member& m = members_[member_of[orphan_sighting[i]]];
    if (m.first_op_count == UINT64_MAX) m.first_op_count = o.rec.op_count;
    append_op(o.rec, member_of[orphan_sighting[i]], o.rec.line, o.file);
  }
  orphans_.clear();
  orphans_.shrink_to_fit();
  const std::string how = fmt::format(
      "the logs have no init lines (NCCL_DEBUG_SUBSYS without INIT): the ranks of {} processes "
      "were inferred in order of host and device, and {} communicators from their collectives' "
      "nranks and opCounts; ring orders were not printed (comm-rank order assumed)",
      order.size(), layout.comms.size());
  (*header_.mutable_metadata())["nccl.inferred"] = how;
  if (!layout.several_devices.empty()) {
    const Process& p = processes_[order[layout.several_devices[0]]];
    report_.notes.push_back(fmt::format(
        "{} processes (e.g. {}:{}) print two comm pointers that run the same collectives: one "
        "process driving several devices, whose lines without init lines cannot be told apart; "
        "each such process is one rank here (add INIT to NCCL_DEBUG_SUBSYS)",
        layout.several_devices.size(), p.host, p.pid));
  }
  report_.notes.push_back(how + "; add INIT to NCCL_DEBUG_SUBSYS for the exact ranks");
  return {};
}

Status NcclTraceBuilder::check_has_ops() const {
  if (op_total_ > 0) return {};
  std::string names;
  for (const std::string& f : files_) names += fmt::format("{}{}", names.empty() ? "" : ", ", f);
  return invalid_argument(fmt::format(
      "{}: no collective lines, so there is nothing to replay; take the log with COLL in "
      "NCCL_DEBUG_SUBSYS (e.g. NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL: INIT gives the exact "
      "ranks)",
      names));
}

Status NcclTraceBuilder::apply_world_size_option(uint32_t& world) {
  const uint32_t given = options_.world_size;
  if (given == 0 || given == world) return {};
  // Init lines always print nranks, as COLL lines of recent versions do (`[nranks=N]`).
  const bool printed = seen_init_ || nranks_printed_;
  if (printed) {
    return invalid_argument(fmt::format(
        "--world-size {} disagrees with the logs: NCCL printed nranks {} for their largest "
        "communicator ({}); leave --world-size out, or import the logs of the job it names",
        given, world, fmt::join(files_, ", ")));
  }
  if (given < world) {
    return invalid_argument(fmt::format(
        "--world-size {} is smaller than the {} ranks the logs show ({})", given, world,
        fmt::join(files_, ", ")));
  }
  const std::string what = fmt::format(
      "the logs print no nranks: the world size {} is --world-size's ({} ranks appear in them)",
      given, world);
  (*header_.mutable_metadata())["nccl.world_size"] = what;
  report_.notes.push_back(what);
  world = given;
  return {};
}

Status NcclTraceBuilder::finish() {
  header_.set_source_format(v1::SOURCE_FORMAT_NCCL_LOG);
  for (const std::string& f : files_) header_.add_source_files(f);
  if (!orphans_.empty()) {
    COLLIDE_RETURN_IF_ERROR(infer_layout());
  } else {
    COLLIDE_RETURN_IF_ERROR(assign_global_ranks());
  }
  uint32_t world = 0;
  for (uint32_t g : slot_global_) world = std::max(world, g + 1);
  // NCCL's nranks, not the ranks seen: a log of one node of a larger job still names its world.
  for (const Member& m : members_) world = std::max(world, static_cast<uint32_t>(m.nranks));
  COLLIDE_RETURN_IF_ERROR(apply_world_size_option(world));
  header_.set_world_size(world);
  if (!tunings_.empty()) (*header_.mutable_metadata())["nccl.tuning"] = format_tunings(tunings_);
  // Nodes: hosts in order of first appearance.
  std::map<std::string, uint32_t> nodes;
  std::vector<v1::RankInfo> infos(world);
  std::vector<bool> observed(world, false);
  for (uint32_t s = 0; s < slot_global_.size(); ++s) {
    observed[slot_global_[s]] = true;
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
  std::vector<uint32_t> unobserved;
  for (uint32_t r = 0; r < world; ++r) {
    infos[r].set_rank(r);
    if (!observed[r]) {
      infos[r].set_device(-1);
      unobserved.push_back(r);
    }
    *header_.add_ranks() = std::move(infos[r]);
  }
  if (!unobserved.empty()) {
    // Ranks of the job that no line of the logs shows (e.g. logs of one node of several).
    (*header_.mutable_metadata())["nccl.unobserved_ranks"] = number_ranges(unobserved);
    if (!options_.fill_unobserved_ranks) {  // else fill_unobserved_ranks says what it did
      report_.notes.push_back(fmt::format(
          "{} of the {} ranks never appear in the logs (ranks {}): their ops are not in the "
          "trace (--fill-unobserved-ranks gives them the whole job's collectives)",
          unobserved.size(), world, number_ranges(unobserved)));
    }
  }
  COLLIDE_RETURN_IF_ERROR(group_communicators());
  COLLIDE_RETURN_IF_ERROR(align_by_op_count());
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
  if (options_.fill_unobserved_ranks && !unobserved.empty()) fill_unobserved_ranks(unobserved);
  report_.ops = op_total_;
  report_.ranks = world;
  report_.communicators = static_cast<uint32_t>(header_.communicators_size());
  return {};
}

Status NcclTraceBuilder::align_by_op_count() {
  std::vector<std::vector<uint32_t>> by_group(group_ids_.size());
  for (uint32_t i = 0; i < members_.size(); ++i) {
    if (members_[i].first_op_count != UINT64_MAX) by_group[members_[i].group].push_back(i);
  }
  bool any = false;
  for (size_t g = 0; g < by_group.size(); ++g) {
    const std::vector<uint32_t>& members = by_group[g];
    if (members.size() < 2) continue;
    uint64_t start = 0;
    bool p2p = false;
    for (uint32_t i : members) {
      start = std::max(start, members_[i].first_op_count);
      p2p = p2p || members_[i].p2p;
    }
    if (p2p) continue;
    for (uint32_t i : members) {
      Member& m = members_[i];
      if (m.first_op_count >= start) continue;
      m.drop_below = start;
      any = true;
      const Process& p = processes_[m.process];
      const std::string what = fmt::format(
          "communicator {}: the log of rank {} ({}:{}) starts at opCount {:#x}, another member's "
          "at {:#x}; its ops before that have no counterpart and are left out",
          group_ids_[g], slot_global_[m.slot], p.host, p.pid, m.first_op_count, start);
      if (options_.strict) return invalid_argument(what);
      report_.add_problem(options_, "(all inputs)", what);
    }
  }
  if (!any) return {};
  if (ops_.size() != op_total_) {
    needs_stored_pass_ = true;  // another builder wrote them as it read
    return {};
  }
  drop_unmatched_ops();
  return {};
}

namespace {

// A packed op's fields but its rank and communicator. The parts are fields of an Op in its wire
// format, so the library reads them back.
void read_packed_fields(const PackedOpView& c, v1::Op& op) {
  op.Clear();
  op.MergeFromString(std::string(c.index_kind));
  op.MergeFromString(std::string(c.rest));
}

// What PackedOps keeps of an op read back from it.
OpWireFields wire_fields_of(const v1::Op& op) {
  OpWireFields f;
  f.index = op.index();
  f.kind = op.kind();
  f.count = op.count();
  f.datatype = op.datatype();
  f.bytes = op.bytes();
  f.root = op.root();
  f.reduce_op = op.reduce_op();
  f.has_enqueue_time = op.has_enqueue_time_ns();
  f.enqueue_time_ns = op.enqueue_time_ns();
  f.op_count = op.op_count();
  f.group = op.group();
  f.source_line = op.source_line();
  f.source_file = op.source_file();
  return f;
}

}  // namespace

void NcclTraceBuilder::fill_unobserved_ranks(const std::vector<uint32_t>& unobserved) {
  const uint32_t world = header_.world_size();
  // The world communicator's member of the lowest rank.
  uint32_t source = UINT32_MAX;
  for (uint32_t i = 0; i < members_.size(); ++i) {
    if (static_cast<uint32_t>(members_[i].nranks) != world) continue;
    if (source == UINT32_MAX || member_out_[i].rank < member_out_[source].rank) source = i;
  }
  if (source == UINT32_MAX) {
    report_.notes.push_back(
        "no communicator of the whole job in the logs: the unobserved ranks are left empty");
    return;
  }
  if (ops_.size() != op_total_) {
    needs_stored_pass_ = true;  // another builder wrote the ops as it read
    return;
  }
  const uint32_t group = member_out_[source].group;
  v1::Communicator& comm = *header_.mutable_communicators(static_cast<int>(group));
  comm.clear_ranks();
  for (uint32_t r = 0; r < world; ++r) comm.add_ranks(r);
  comm.clear_declared_size();
  comm.set_name("world");
  // Every rank issues each collective of a communicator, with the same count; point-to-point
  // ops have peers of their own and are not copied.
  const uint32_t first_new = static_cast<uint32_t>(member_out_.size());
  for (uint32_t r : unobserved) member_out_.push_back({r, group});
  const size_t observed_ops = ops_.size();
  PackedOps::Reader reader(ops_, 0);
  PackedOpView c;
  v1::Op op;
  uint64_t index = 0;
  for (size_t i = 0; i < observed_ops; ++i) {
    reader.next(c);
    if (c.member != source) continue;
    read_packed_fields(c, op);
    if (op.kind() == v1::OP_KIND_SEND || op.kind() == v1::OP_KIND_RECV) continue;
    OpWireFields f = wire_fields_of(op);
    f.index = index++;
    for (uint32_t k = 0; k < unobserved.size(); ++k) ops_.append(first_new + k, f);
  }
  op_total_ = ops_.size();
  const std::string what = fmt::format(
      "ranks {} never appear in the logs: they were given the collectives of communicator {} "
      "(copied from rank {}, as every rank issues each with the same count)",
      number_ranges(unobserved), comm.id(), member_out_[source].rank);
  (*header_.mutable_metadata())["nccl.filled_ranks"] = what;
  report_.notes.push_back(what);
}

void NcclTraceBuilder::drop_unmatched_ops() {
  // Rare (only logs that start apart), so the ops are decoded and packed again.
  PackedOps kept;
  std::vector<uint64_t> next_index(slot_process_.size(), 0);
  PackedOps::Reader reader(ops_, 0);
  PackedOpView c;
  v1::Op op;
  for (size_t i = 0; i < ops_.size(); ++i) {
    reader.next(c);
    read_packed_fields(c, op);
    const Member& m = members_[c.member];
    if (op.op_count() < m.drop_below) continue;
    OpWireFields f = wire_fields_of(op);
    f.index = next_index[m.slot]++;
    kept.append(c.member, f);
  }
  op_total_ = kept.size();
  ops_ = std::move(kept);
}

void NcclTraceBuilder::fill_op(const PackedOpView& c, v1::Op& op) const {
  read_packed_fields(c, op);
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
