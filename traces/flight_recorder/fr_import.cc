#include "traces/flight_recorder/fr_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <unordered_map>

#include "traces/flight_recorder/fr_dump.h"
#include "traces/flight_recorder/pickle_decode.h"
#include "traces/flight_recorder/stop_at_hang.h"
#include "traces/flight_recorder/torch_names.h"
#include "traces/import/input_files.h"
#include "traces/op_types.h"
#include "traces/trace_io.h"

namespace collide::traces::flight_recorder {
namespace {

namespace fs = std::filesystem;

struct RankDump {
  uint32_t rank = 0;
  std::string file;
  FrDump dump;
};

// The number a dump's file name ends in, before any .json/.pkl/.pickle extension.
Result<uint32_t> rank_from_file_name(const std::string& path) {
  std::string stem = fs::path(path).filename().string();
  for (std::string_view ext : {".json", ".pkl", ".pickle"}) {
    if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0) {
      stem.resize(stem.size() - ext.size());
      break;
    }
  }
  size_t digits = stem.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(stem[digits - 1]))) --digits;
  uint32_t rank = 0;
  const auto [end, ec] = std::from_chars(stem.data() + digits, stem.data() + stem.size(), rank);
  if (digits == stem.size() || ec != std::errc() || end != stem.data() + stem.size()) {
    return invalid_argument(fmt::format(
        "{}: cannot tell the rank: a Flight Recorder dump's file name ends in its rank "
        "(e.g. nccl_trace_rank_3 or nccl_trace_rank_3.json)",
        path));
  }
  return rank;
}

Result<RankDump> read_rank_dump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(fmt::format("{}: cannot open the Flight Recorder dump", path));
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto rank = rank_from_file_name(path);
  if (!rank.ok()) return rank.status();
  nlohmann::json doc;
  if (looks_like_pickle(bytes)) {
    PickleLimits limits;
    limits.skipped_keys = {"frames"};  // stack traces: the import does not use them
    auto decoded = decode_pickle(bytes, path, limits);
    if (!decoded.ok()) return decoded.status();
    doc = std::move(*decoded);
  } else {
    doc = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
      return invalid_argument(
          fmt::format("{}: neither a pickle nor JSON Flight Recorder dump", path));
    }
  }
  auto dump = parse_fr_dump(doc, path);
  if (!dump.ok()) return dump.status();
  return RankDump{*rank, path, std::move(*dump)};
}

struct Group {
  std::string desc;
  std::vector<uint32_t> ranks;                     // global, in group-rank order
  std::unordered_map<uint32_t, uint32_t> local;    // global rank -> group rank
  uint64_t first_common_seq = 0;  // collectives before it are not held by every dumped member
};

// A profiling name "nccl:send 0->1" split into its op type ("send") and what follows ("0->1").
std::pair<std::string_view, std::string_view> split_profiling_name(std::string_view name) {
  const size_t colon = name.find(':');
  if (colon != std::string_view::npos) name.remove_prefix(colon + 1);
  const size_t space = name.find(' ');
  if (space == std::string_view::npos) return {name, {}};
  return {name.substr(0, space), name.substr(space + 1)};
}

bool is_p2p_entry(const FrEntry& entry) {
  const auto kind = op_kind_from_torch(split_profiling_name(entry.profiling_name).first);
  return entry.is_p2p || (kind && is_point_to_point(*kind));
}

// "s->d" (send) or "d<-s" (recv): the peer's group rank.
std::optional<uint32_t> p2p_peer(std::string_view meta, v1::OpKind kind) {
  const std::string_view arrow = kind == v1::OP_KIND_SEND ? "->" : "<-";
  const size_t at = meta.find(arrow);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view peer = meta.substr(at + 2);
  uint32_t value = 0;
  const auto [end, ec] = std::from_chars(peer.data(), peer.data() + peer.size(), value);
  if (ec != std::errc() || end != peer.data() + peer.size()) return std::nullopt;
  return value;
}

class Converter {
 public:
  Converter(const std::map<std::string, Group>& groups, const ImportOptions& options,
            ImportReport& report)
      : groups_(groups), options_(options), report_(report) {}

  // The op of `entry` on `rank`, nullopt when it is skipped (a problem, a coalesced-group marker
  // or a collective before the common window), or an error in strict mode.
  Result<std::optional<v1::Op>> convert(const RankDump& dump, const FrEntry& entry) {
    const std::string where = fmt::format("{}:entries[{}]", dump.file, entry.position);
    const auto [type, meta] = split_profiling_name(entry.profiling_name);
    if (type == "coalesced") {
      ++coalesced_markers_;  // the group's own ops are entries of their own
      return std::optional<v1::Op>();
    }
    const auto kind = op_kind_from_torch(type);
    if (!kind) return skip(where, fmt::format("profiling_name '{}' is not a collective or "
                                              "send/recv", entry.profiling_name));
    const auto group_it = groups_.find(entry.pg_name);
    if (group_it == groups_.end()) {
      return skip(where, fmt::format("process group '{}' is not in any dump's pg_config",
                                     entry.pg_name));
    }
    const Group& group = group_it->second;
    if (group.local.count(dump.rank) == 0) {
      return skip(where, fmt::format("rank {} is not in process group '{}'", dump.rank,
                                     entry.pg_name));
    }
    const bool p2p = is_point_to_point(*kind);
    if (!p2p && entry.collective_seq_id < group.first_common_seq) {
      ++trimmed_;
      return std::optional<v1::Op>();
    }
    v1::Op op;
    op.set_rank(dump.rank);
    op.set_kind(*kind);
    op.set_comm(entry.pg_name);
    op.set_root(-1);
    const auto n = static_cast<uint64_t>(group.ranks.size());
    const uint64_t count = nccl_count(*kind, entry.input_numel, entry.output_numel, n);
    if (*kind == v1::OP_KIND_BROADCAST || *kind == v1::OP_KIND_REDUCE ||
        *kind == v1::OP_KIND_GATHER || *kind == v1::OP_KIND_SCATTER) {
      op.set_root(0);  // not in the dump (no entry field records it)
      ++rooted_;
    }
    if (p2p) {
      const auto peer = p2p_peer(meta, *kind);
      if (!peer || *peer >= n) {
        return skip(where, fmt::format("profiling_name '{}' does not name a peer of the {} "
                                       "ranks of process group '{}'",
                                       entry.profiling_name, n, entry.pg_name));
      }
      op.set_root(static_cast<int32_t>(*peer));
    }
    if (*kind != v1::OP_KIND_BARRIER) {
      const std::string& torch_type =
          entry.input_dtype.empty() ? entry.output_dtype : entry.input_dtype;
      const auto datatype = datatype_from_torch(torch_type);
      if (!datatype) {
        return skip(where, fmt::format("input_dtypes: '{}' has no NCCL type", torch_type));
      }
      uint64_t bytes = 0;
      if (__builtin_mul_overflow(count, datatype_size(*datatype), &bytes)) {
        return skip(where, "size passes 2^64 bytes");
      }
      op.set_count(count);
      op.set_datatype(*datatype);
      op.set_bytes(bytes);
    }
    op.set_op_count(p2p ? entry.p2p_seq_id : entry.collective_seq_id);
    op.set_state(entry.state);
    op.set_enqueue_time_ns(entry.time_created_ns);
    if (entry.duration_ms) {
      op.set_measured_duration_ns(static_cast<uint64_t>(std::llround(*entry.duration_ms * 1e6)));
    }
    op.set_label(entry.profiling_name);
    op.set_source(where);
    return std::optional<v1::Op>(std::move(op));
  }

  uint64_t trimmed() const { return trimmed_; }
  uint64_t rooted() const { return rooted_; }
  uint64_t coalesced_markers() const { return coalesced_markers_; }

 private:
  Result<std::optional<v1::Op>> skip(const std::string& where, std::string what) {
    if (options_.strict) return invalid_argument(where + ": " + what);
    report_.add_problem(options_, where, std::move(what));
    return std::optional<v1::Op>();
  }

  const std::map<std::string, Group>& groups_;
  const ImportOptions& options_;
  ImportReport& report_;
  uint64_t trimmed_ = 0;
  uint64_t coalesced_markers_ = 0;
  uint64_t rooted_ = 0;
};

bool is_coalesced_marker(const FrEntry& e) {
  return split_profiling_name(e.profiling_name).first == "coalesced";
}

// The sequence number that ties an entry to its coalesced group: p2p_seq_id for point-to-point
// entries, collective_seq_id for the rest (as PyTorch's own analyzer pairs them).
uint64_t coalescing_seq(const FrEntry& e) {
  return e.is_p2p ? e.p2p_seq_id : e.collective_seq_id;
}

uint64_t state_order(v1::OpState state) {
  switch (state) {
    case v1::OP_STATE_COMPLETED:
      return 3;
    case v1::OP_STATE_STARTED:
      return 2;
    case v1::OP_STATE_SCHEDULED:
      return 1;
    default:
      return 0;
  }
}

// Ops issued inside a coalescing group (batch_isend_irecv, coalesced collectives) are recorded one
// entry each, without CUDA events of their own, so their state stays "scheduled"; the group's
// `nccl:coalesced` entry that follows them (same process group and sequence number) carries the
// group's state and duration. Each member takes those. `entries` are one rank's, in record order;
// returns how many members were given their group's state.
uint64_t give_coalesced_groups_their_state(std::vector<FrEntry*>& entries) {
  uint64_t given = 0;
  for (size_t m = 0; m < entries.size(); ++m) {
    const FrEntry& marker = *entries[m];
    if (!is_coalesced_marker(marker)) continue;
    for (size_t i = m; i-- > 0;) {
      FrEntry& e = *entries[i];
      if (e.pg_name != marker.pg_name) continue;  // another group's op between
      if (is_coalesced_marker(e) || coalescing_seq(e) != coalescing_seq(marker)) break;
      if (state_order(marker.state) > state_order(e.state)) e.state = marker.state;
      if (!e.duration_ms) e.duration_ms = marker.duration_ms;
      ++given;
    }
  }
  return given;
}

// Process groups of all dumps; one group with different ranks in two dumps is an error.
Result<std::map<std::string, Group>> merge_groups(const std::vector<RankDump>& dumps) {
  std::map<std::string, Group> groups;
  for (const RankDump& d : dumps) {
    for (const auto& [name, g] : d.dump.groups) {
      auto [it, inserted] = groups.try_emplace(name);
      if (!inserted) {
        if (it->second.ranks != g.ranks) {
          return invalid_argument(fmt::format(
              "{}: pg_config[{}].ranks differ from another dump's for the same group", d.file,
              name));
        }
        continue;
      }
      it->second.desc = g.desc;
      it->second.ranks = g.ranks;
      for (uint32_t i = 0; i < g.ranks.size(); ++i) {
        if (!it->second.local.emplace(g.ranks[i], i).second) {
          return invalid_argument(
              fmt::format("{}: pg_config[{}].ranks lists rank {} twice", d.file, name, g.ranks[i]));
        }
      }
    }
  }
  return groups;
}

// Per group, the first collective every dumped member holds: the latest of the members' first.
void find_common_windows(const std::vector<RankDump>& dumps, std::map<std::string, Group>& groups) {
  for (const RankDump& d : dumps) {
    std::map<std::string, uint64_t> first;
    for (const FrEntry& e : d.dump.entries) {
      if (is_p2p_entry(e)) continue;
      auto [it, inserted] = first.try_emplace(e.pg_name, e.collective_seq_id);
      if (!inserted) it->second = std::min(it->second, e.collective_seq_id);
    }
    for (const auto& [name, seq] : first) {
      const auto g = groups.find(name);
      if (g != groups.end()) g->second.first_common_seq = std::max(g->second.first_common_seq, seq);
    }
  }
}

}  // namespace

Result<ImportReport> import_flight_recorder(const std::vector<std::string>& inputs,
                                            const std::string& output,
                                            const ImportOptions& options) {
  auto files = expand_input_files(inputs, "Flight Recorder dumps");
  if (!files.ok()) return files.status();
  std::vector<RankDump> dumps;
  for (const std::string& file : *files) {
    auto dump = read_rank_dump(file);
    if (!dump.ok()) return dump.status();
    for (const RankDump& other : dumps) {
      if (other.rank == dump->rank) {
        return invalid_argument(fmt::format("{} and {} are both dumps of rank {}", other.file,
                                            file, dump->rank));
      }
    }
    dumps.push_back(std::move(*dump));
  }
  std::sort(dumps.begin(), dumps.end(),
            [](const RankDump& a, const RankDump& b) { return a.rank < b.rank; });
  auto groups = merge_groups(dumps);
  if (!groups.ok()) return groups.status();
  find_common_windows(dumps, *groups);

  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_FLIGHT_RECORDER);
  uint32_t world = 0;
  std::string dumped;
  for (const RankDump& d : dumps) {
    header.add_source_files(d.file);
    world = std::max(world, d.rank + 1);
    v1::RankInfo* info = header.add_ranks();  // only ranks with a dump: the others left none
    info->set_rank(d.rank);
    info->set_device(-1);
    if (!dumped.empty()) dumped += ',';  // (a `"," + to_string` here trips GCC 12's -Wrestrict at -O3)
    dumped += std::to_string(d.rank);
  }
  for (const auto& [name, g] : *groups) {
    v1::Communicator* c = header.add_communicators();
    c->set_id(name);
    c->set_name(g.desc.empty() || g.desc == "undefined" ? "pg " + name : g.desc);
    for (uint32_t r : g.ranks) {
      c->add_ranks(r);
      world = std::max(world, r + 1);
    }
  }
  header.set_world_size(world);
  (*header.mutable_metadata())["flight_recorder.version"] = dumps.front().dump.version;
  (*header.mutable_metadata())["flight_recorder.dumped_ranks"] = dumped;

  ImportReport report;
  Converter converter(*groups, options, report);
  std::vector<std::vector<v1::Op>> ops(dumps.size());
  uint64_t coalesced_ops = 0;
  for (size_t i = 0; i < dumps.size(); ++i) {
    std::vector<FrEntry*> entries;
    for (FrEntry& e : dumps[i].dump.entries) entries.push_back(&e);
    std::stable_sort(entries.begin(), entries.end(), [](const FrEntry* a, const FrEntry* b) {
      return a->record_id < b->record_id;
    });
    coalesced_ops += give_coalesced_groups_their_state(entries);
    for (const FrEntry* e : entries) {
      ++report.units_read;
      auto op = converter.convert(dumps[i], *e);
      if (!op.ok()) return op.status();
      if (!*op) continue;
      (*op)->set_index(ops[i].size());
      ops[i].push_back(std::move(**op));
    }
  }
  (*header.mutable_metadata())["flight_recorder.entries_before_common_window"] =
      std::to_string(converter.trimmed());
  (*header.mutable_metadata())["flight_recorder.coalesced_markers"] =
      std::to_string(converter.coalesced_markers());
  if (coalesced_ops > 0) {
    (*header.mutable_metadata())["flight_recorder.coalesced_ops"] = fmt::format(
        "{} ops issued in coalescing groups took their group's state and duration",
        coalesced_ops);
  }
  if (converter.rooted() > 0) {
    const std::string what = fmt::format(
        "{} broadcast/reduce/gather/scatter ops: Flight Recorder does not record the root; "
        "rank 0 of each process group assumed",
        converter.rooted());
    (*header.mutable_metadata())["flight_recorder.root"] = what;
    report.notes.push_back(what);
  }
  if (options.stop_at_hang) {
    const HangCut cut = stop_at_hang(header, ops);
    const std::string what =
        cut.hung ? fmt::format("stopped at the hang ({} ops left out): {}", cut.ops_left_out,
                               fmt::join(cut.where, "; "))
                 : "stopped at the hang: nothing to cut, every recorded op completed";
    (*header.mutable_metadata())["flight_recorder.stopped_at_hang"] = what;
    report.notes.push_back(what);
  }

  auto writer = TraceWriter::create(output, header);
  if (!writer.ok()) return writer.status();
  for (const auto& rank_ops : ops) {
    for (const v1::Op& op : rank_ops) {
      COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
      ++report.ops;
    }
  }
  COLLIDE_RETURN_IF_ERROR((*writer)->close());
  report.ranks = static_cast<uint32_t>(dumps.size());
  report.communicators = static_cast<uint32_t>(header.communicators_size());
  return report;
}

}  // namespace collide::traces::flight_recorder
