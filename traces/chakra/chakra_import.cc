#include "traces/chakra/chakra_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "traces/chakra/comm_groups.h"
#include "traces/chakra/et_stream.h"
#include "traces/chakra/node_attrs.h"
#include "traces/chakra/pg_config.h"
#include "traces/chakra/rank_converter.h"
#include "traces/trace_io.h"

namespace collide::traces::chakra {
namespace {

namespace fs = std::filesystem;

void record_problem(ImportReport& report, const ImportOptions& options, std::string where,
                    std::string what) {
  ++report.problems_total;
  if (report.problems.size() < options.max_reported_problems) {
    report.problems.push_back({std::move(where), std::move(what)});
  }
}

struct Inputs {
  std::map<uint32_t, std::string> rank_files;
  std::optional<std::string> comm_groups;
  uint64_t total_bytes = 0;
};

Status add_et_file(const std::string& path, Inputs& in) {
  static const std::regex kName(R"(^.*\.(\d+)\.et$)");
  std::smatch m;
  const std::string name = fs::path(path).filename().string();
  if (!std::regex_match(name, m, kName) || m[1].length() > 9) {
    return invalid_argument(fmt::format(
        "{}: a Chakra trace file must be named <prefix>.<rank>.et (or give the comm-group .json)",
        path));
  }
  uint32_t rank = 0;
  const std::string digits = m[1].str();
  if (std::from_chars(digits.data(), digits.data() + digits.size(), rank).ec != std::errc()) {
    return invalid_argument(fmt::format("{}: rank '{}' in the file name is not a rank", path, digits));
  }
  auto [it, fresh] = in.rank_files.emplace(rank, path);
  if (!fresh) {
    return invalid_argument(fmt::format("{} and {} are both rank {}", it->second, path, rank));
  }
  std::error_code ec;
  in.total_bytes += fs::file_size(path, ec);
  return {};
}

Status set_comm_groups(const std::string& path, Inputs& in) {
  if (in.comm_groups) {
    return invalid_argument(
        fmt::format("two comm-group files ({} and {}); give the one that belongs to the trace",
                    *in.comm_groups, path));
  }
  in.comm_groups = path;
  return {};
}

Result<Inputs> collect_inputs(const std::vector<std::string>& paths) {
  Inputs in;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> entries;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        if (entry.is_regular_file()) entries.push_back(entry.path().string());
      }
      std::sort(entries.begin(), entries.end());
      for (const std::string& e : entries) {
        if (e.ends_with(".et")) {
          COLLIDE_RETURN_IF_ERROR(add_et_file(e, in));
        } else if (e.ends_with(".json")) {
          COLLIDE_RETURN_IF_ERROR(set_comm_groups(e, in));
        }
      }
      if (ec) return errno_status(ec.value(), fmt::format("listing {}", path));
    } else if (!fs::exists(path, ec)) {
      return not_found(fmt::format("{}: no such file or directory", path));
    } else if (path.ends_with(".json")) {
      COLLIDE_RETURN_IF_ERROR(set_comm_groups(path, in));
    } else {
      COLLIDE_RETURN_IF_ERROR(add_et_file(path, in));
    }
  }
  if (in.rank_files.empty()) {
    return invalid_argument("no Chakra trace files (<prefix>.<rank>.et) among the inputs");
  }
  return in;
}

// First pass: the process groups the nodes name, in order of first use, and whether some
// communication node names none. Also proves every file decodes before anything is written.
struct GroupUse {
  std::vector<std::string> names;
  bool world = false;
  ChakraProtoMsg::GlobalMetadata metadata;  // rank 0's (or the first file's)
  std::optional<PgConfig> pg_config;        // the first process-group record found
  std::string pg_config_where;              // "file: record N (node id)" of the first record
  std::string pg_config_error;              // why that record could not be read
  bool collectives = false;                 // some node is a collective
};

Status scan_groups(const Inputs& in, GroupUse& use) {
  std::set<std::string> seen;
  bool first = true;
  for (const auto& [rank, path] : in.rank_files) {
    auto decoder = EtDecoder::open(path);
    if (!decoder.ok()) return decoder.status();
    ChakraProtoMsg::GlobalMetadata metadata;
    COLLIDE_RETURN_IF_ERROR((*decoder)->read_metadata(metadata));
    if (first) use.metadata = metadata;
    first = false;
    ChakraProtoMsg::Node node;
    for (;;) {
      const uint64_t record = (*decoder)->records_read();
      auto more = (*decoder)->next(node);
      if (!more.ok()) return more.status();
      if (!*more) break;
      if (use.pg_config_where.empty() && is_pg_config_node(node)) {
        use.pg_config_where = fmt::format("{}: record {} (node {})", path, record, node.id());
        auto config = parse_pg_config(node.inputs().values());
        if (config.ok()) {
          use.pg_config = std::move(*config);
        } else {
          use.pg_config_error = config.status().message();
        }
        continue;
      }
      if ((node.type() != ChakraProtoMsg::COMM_COLL_NODE &&
           node.type() != ChakraProtoMsg::COMM_SEND_NODE &&
           node.type() != ChakraProtoMsg::COMM_RECV_NODE) ||
          is_host_side_comm(node)) {
        continue;
      }
      use.collectives |= node.type() == ChakraProtoMsg::COMM_COLL_NODE;
      const auto pg = string_attr(node, "pg_name");
      if (!pg || pg->empty()) {
        use.world = true;
      } else if (seen.insert(*pg).second) {
        use.names.push_back(*pg);
      }
    }
  }
  return {};
}

// "rank 3", "ranks 1-7" or "ranks 2, 5, 9, ...".
std::string rank_list(const std::vector<uint32_t>& ranks) {
  if (ranks.size() == 1) return fmt::format("rank {}", ranks[0]);
  if (ranks.back() - ranks.front() + 1 == ranks.size())
    return fmt::format("ranks {}-{}", ranks.front(), ranks.back());
  constexpr size_t kShown = 8;
  const size_t shown = std::min(ranks.size(), kShown);
  return fmt::format("ranks {}{}", fmt::join(ranks.begin(), ranks.begin() + shown, ", "),
                     ranks.size() > kShown ? ", ..." : "");
}

// The number of ranks: the highest rank file's, raised to what the trace's process-group record
// or the caller says. A single rank's trace with neither is taken as it stands, loudly.
Result<uint32_t> decide_world_size(const Inputs& in, const GroupUse& use,
                                   const ImportOptions& options, ImportReport& report) {
  if (!use.pg_config_error.empty()) {
    // E.g. the Python-literal form PyTorch wrote before its JSON one: the trace is still usable.
    const std::string what = use.pg_config_error + "; process groups taken as the world";
    if (options.strict) return invalid_argument(fmt::format("{}: {}", use.pg_config_where, what));
    record_problem(report, options, use.pg_config_where, what);
  }
  const uint32_t from_files = in.rank_files.rbegin()->first + 1;
  const uint32_t from_groups = use.pg_config ? use.pg_config->world_size() : 0;
  const uint32_t needed = std::max(from_files, from_groups);
  uint32_t world = needed;
  if (options.world_size != 0) {
    if (options.world_size < needed) {
      return invalid_argument(fmt::format(
          "the world size given, {}, is below the {} ranks the trace names ({})",
          options.world_size, needed,
          from_groups > from_files ? "its process-group record, " + use.pg_config_where
                                   : fmt::format("a file of rank {}", from_files - 1)));
    }
    world = options.world_size;
  } else if (from_groups > from_files) {
    report.notes.push_back(fmt::format("{} ranks, from the process-group record at {}",
                                       from_groups, use.pg_config_where));
  } else if (from_groups == 0 && from_files == 1 && use.collectives) {
    const std::string what =
        "one rank's trace and no process-group record (no process_group:init node): the job is "
        "taken as 1 rank, so its collectives have no peers and no traffic; give the job's rank "
        "count (collide trace import --world-size N)";
    if (options.strict)
      return invalid_argument(fmt::format("{}: {}", in.rank_files.begin()->second, what));
    record_problem(report, options, in.rank_files.begin()->second, what);
  }
  std::vector<uint32_t> missing;
  for (uint32_t r = 0; r < world; ++r) {
    if (!in.rank_files.contains(r)) missing.push_back(r);
  }
  if (!missing.empty()) {
    const std::string what = fmt::format("no trace file for {} of the {} ranks ({}); they have no ops",
                                         missing.size(), world, rank_list(missing));
    if (options.strict) return invalid_argument(what);
    record_problem(report, options, "ranks", what);
  }
  return world;
}

}  // namespace

Result<ImportReport> import_chakra(const std::vector<std::string>& inputs,
                                   const std::string& output, const ImportOptions& options) {
  auto in = collect_inputs(inputs);
  if (!in.ok()) return in.status();
  ImportReport report;
  GroupUse use;
  COLLIDE_RETURN_IF_ERROR(scan_groups(*in, use));
  auto world = decide_world_size(*in, use, options, report);
  if (!world.ok()) return world.status();
  const uint32_t world_size = *world;

  std::vector<CommGroup> groups;
  if (in->comm_groups) {
    auto read = read_comm_groups(*in->comm_groups);
    if (!read.ok()) return read.status();
    groups = std::move(*read);
  }
  std::vector<uint32_t> everyone(world_size);
  for (uint32_t r = 0; r < world_size; ++r) everyone[r] = r;
  std::set<std::string> defined;
  for (const CommGroup& g : groups) defined.insert(g.name);
  // Groups the comm-group file does not give: their members from the trace's own process-group
  // record where it names them, else every rank.
  for (const std::string& name : use.names) {
    if (!defined.insert(name).second) continue;
    const PgConfigEntry* known = use.pg_config ? use.pg_config->find(name) : nullptr;
    groups.push_back({name, known != nullptr && !known->ranks.empty() ? known->ranks : everyone});
  }
  if (use.world && defined.insert(kWorldCommunicator).second)
    groups.push_back({kWorldCommunicator, everyone});

  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_CHAKRA_ET);
  for (const auto& [rank, path] : in->rank_files) header.add_source_files(path);
  if (in->comm_groups) header.add_source_files(*in->comm_groups);
  header.set_world_size(world_size);
  for (uint32_t r = 0; r < world_size; ++r) {
    v1::RankInfo* info = header.add_ranks();
    info->set_rank(r);
    info->set_device(-1);
  }
  CommTable table;
  for (const CommGroup& g : groups) {
    for (uint32_t r : g.ranks) {
      if (r >= world_size) {
        return invalid_argument(
            fmt::format("{}: group '{}' names rank {} but the trace has {} ranks",
                        in->comm_groups.value_or("comm groups"), g.name, r, world_size));
      }
    }
    v1::Communicator* comm = header.add_communicators();
    comm->set_id(g.name);
    comm->set_name(g.name);
    for (uint32_t r : g.ranks) comm->add_ranks(r);
    table.emplace(g.name, make_comm_index(g.name, g.ranks));
  }
  (*header.mutable_metadata())[kVersionKey] = use.metadata.version();
  for (const auto& attr : use.metadata.attr()) {
    if (attr.value_case() == ChakraProtoMsg::AttributeProto::kStringVal &&
        attr.name() != kVersionKey) {
      (*header.mutable_metadata())[attr.name()] = attr.string_val();
    }
  }

  auto writer = TraceWriter::create(output, header);
  if (!writer.ok()) return writer.status();
  uint64_t bytes_done = 0;
  uint64_t host_side = 0;
  for (const auto& [rank, path] : in->rank_files) {
    auto decoder = EtDecoder::open(path);
    if (!decoder.ok()) return decoder.status();
    ChakraProtoMsg::GlobalMetadata metadata;
    COLLIDE_RETURN_IF_ERROR((*decoder)->read_metadata(metadata));
    RankConverter converter(rank, &table, path);
    ChakraProtoMsg::Node node;
    for (;;) {
      const uint64_t record = (*decoder)->records_read();
      auto more = (*decoder)->next(node);
      if (!more.ok()) return more.status();
      if (!*more) break;
      ++report.units_read;
      auto op = converter.add(node, record);
      if (!op.ok()) {
        if (options.strict) return op.status();
        // The message starts with "file: record N (node id): ".
        const std::string& msg = op.status().message();
        const size_t split = msg.find("): ");
        record_problem(report, options,
                       split == std::string::npos ? path : msg.substr(0, split + 1),
                       split == std::string::npos ? msg : msg.substr(split + 3));
        continue;
      }
      if (*op) {
        COLLIDE_RETURN_IF_ERROR((*writer)->write(**op));
        ++report.ops;
      }
      if (options.progress && (report.units_read & 0xffff) == 0) {
        options.progress(bytes_done + (*decoder)->bytes_read(), in->total_bytes);
      }
    }
    if (converter.forward_references() > 0) {
      const std::string what =
          fmt::format("{} dependencies on nodes that come later in the file were dropped",
                      converter.forward_references());
      if (options.strict) return invalid_argument(fmt::format("{}: {}", path, what));
      record_problem(report, options, path, what);
    }
    host_side += converter.host_side_nodes();
    bytes_done += (*decoder)->bytes_read();
    if (options.progress) options.progress(bytes_done, in->total_bytes);
  }
  COLLIDE_RETURN_IF_ERROR((*writer)->close());
  if (host_side > 0) {
    report.notes.push_back(fmt::format(
        "{} host-side collective records (PyTorch c10d:: operators without comm_type) passed "
        "over; their GPU kernel nodes carry the collectives",
        host_side));
  }
  report.ranks = world_size;
  report.communicators = static_cast<uint32_t>(header.communicators_size());
  return report;
}

}  // namespace collide::traces::chakra
