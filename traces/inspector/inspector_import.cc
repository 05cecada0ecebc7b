#include "traces/inspector/inspector_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "traces/import/input_files.h"
#include "traces/import/json_fields.h"
#include "traces/trace_io.h"

namespace collide::traces::inspector {
namespace {

using nlohmann::json;

// One coll_perf record and where it was.
struct Record {
  std::string where;  // "file:line"
  std::string comm;   // header.id
  uint32_t comm_rank = 0;
  uint32_t comm_size = 0;
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  uint64_t seq = 0;
  uint64_t bytes = 0;
  uint64_t exec_time_us = 0;
  uint64_t dump_time_us = 0;
};

struct Process {
  std::string key;  // "host pid", or the file when metadata does not say
  std::vector<Record> records;
};

Result<uint64_t> uint_field(const json& object, std::string_view field, const std::string& where) {
  const auto it = object.find(field);
  if (it == object.end()) return invalid_argument(fmt::format("{}: {}: missing", where, field));
  auto number = json_uint(*it);
  if (!number.ok()) {
    return invalid_argument(fmt::format("{}: {}: {}", where, field, number.status().message()));
  }
  return number;
}

Result<uint32_t> uint32_field(const json& object, std::string_view field, const std::string& where) {
  auto value = uint_field(object, field, where);
  if (!value.ok()) return value.status();
  if (*value > std::numeric_limits<uint32_t>::max()) {
    return invalid_argument(fmt::format("{}: {}: {} is too large", where, field, *value));
  }
  return static_cast<uint32_t>(*value);
}

const json* object_field(const json& object, std::string_view field) {
  const auto it = object.find(field);
  return it == object.end() || !it->is_object() ? nullptr : &*it;
}

// NCCL's function names as the plugin prints them.
std::optional<v1::OpKind> kind_of(std::string_view coll) {
  if (coll == "AllReduce") return v1::OP_KIND_ALL_REDUCE;
  if (coll == "AllGather") return v1::OP_KIND_ALL_GATHER;
  if (coll == "ReduceScatter") return v1::OP_KIND_REDUCE_SCATTER;
  if (coll == "Broadcast") return v1::OP_KIND_BROADCAST;
  if (coll == "Reduce") return v1::OP_KIND_REDUCE;
  if (coll == "AllToAll") return v1::OP_KIND_ALL_TO_ALL;
  return std::nullopt;
}

// Reads one line's record into `process`; a line without coll_perf is not a record.
Status read_line(const json& line, const std::string& where, Process& process, bool& keyed,
                 Record& out, bool& is_record) {
  is_record = false;
  if (!line.is_object()) return invalid_argument(where + ": expected a JSON object");
  const json* header = object_field(line, "header");
  const json* perf = object_field(line, "coll_perf");
  if (header == nullptr) return invalid_argument(where + ": header: missing");
  if (const json* meta = object_field(line, "metadata"); meta != nullptr && !keyed) {
    const auto host = meta->find("hostname");
    const auto pid = meta->find("pid");
    if (host != meta->end() && host->is_string() && pid != meta->end() && pid->is_number()) {
      process.key = fmt::format("{} {}", host->get<std::string>(), pid->dump());
      keyed = true;
    }
  }
  if (perf == nullptr) return Status::ok_status();
  const auto id = header->find("id");
  if (id == header->end() || !id->is_string()) {
    return invalid_argument(where + ": header.id: expected the communicator's id text");
  }
  out.where = where;
  out.comm = id->get<std::string>();
  auto rank = uint32_field(*header, "rank", where + ": header");
  if (!rank.ok()) return rank.status();
  auto size = uint32_field(*header, "n_ranks", where + ": header");
  if (!size.ok()) return size.status();
  if (*size == 0 || *rank >= *size) {
    return invalid_argument(
        fmt::format("{}: header: rank {} is not below n_ranks {}", where, *rank, *size));
  }
  out.comm_rank = *rank;
  out.comm_size = *size;
  const auto coll = perf->find("coll");
  if (coll == perf->end() || !coll->is_string()) {
    return invalid_argument(where + ": coll_perf.coll: expected a collective's name");
  }
  const auto kind = kind_of(coll->get<std::string>());
  if (!kind) {
    return invalid_argument(fmt::format("{}: coll_perf.coll: '{}' is not a collective collide "
                                        "knows",
                                        where, coll->get<std::string>()));
  }
  out.kind = *kind;
  auto seq = uint_field(*perf, "coll_sn", where + ": coll_perf");
  if (!seq.ok()) return seq.status();
  auto bytes = uint_field(*perf, "coll_msg_size_bytes", where + ": coll_perf");
  if (!bytes.ok()) return bytes.status();
  auto time = uint_field(*perf, "coll_exec_time_us", where + ": coll_perf");
  if (!time.ok()) return time.status();
  if (*time > std::numeric_limits<uint64_t>::max() / 1000) {
    return invalid_argument(where + ": coll_perf.coll_exec_time_us: too large");
  }
  out.seq = *seq;
  out.bytes = *bytes;
  out.exec_time_us = *time;
  if (const json* meta = object_field(line, "metadata")) {
    if (meta->contains("dump_timestamp_us")) {
      auto dumped = uint_field(*meta, "dump_timestamp_us", where + ": metadata");
      if (!dumped.ok()) return dumped.status();
      out.dump_time_us = *dumped;
    }
  }
  is_record = true;
  return Status::ok_status();
}

Result<Process> read_file(const std::string& path, const ImportOptions& options,
                          ImportReport& report) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(fmt::format("{}: cannot open the NCCL Inspector output", path));
  Process process;
  process.key = path;
  bool keyed = false;
  std::string text;
  uint64_t line_number = 0;
  while (std::getline(in, text)) {
    ++line_number;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++report.units_read;
    const std::string where = fmt::format("{}:{}", path, line_number);
    const json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    Status status;
    Record record;
    bool is_record = false;
    if (line.is_discarded()) {
      status = invalid_argument(where + ": not a JSON object on one line");
    } else {
      status = read_line(line, where, process, keyed, record, is_record);
    }
    if (!status.ok()) {
      if (options.strict) return status;
      // The report keeps the place apart from what went wrong there.
      const std::string& message = status.message();
      const std::string prefix = where + ": ";
      report.add_problem(options, where,
                         message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message);
      continue;
    }
    if (is_record) process.records.push_back(std::move(record));
  }
  return process;
}

}  // namespace

Result<ImportReport> import_nccl_inspector(const std::vector<std::string>& inputs,
                                           const std::string& output,
                                           const ImportOptions& options) {
  auto files = expand_input_files(inputs, "NCCL Inspector output", ".log");
  if (!files.ok()) return files.status();
  ImportReport report;
  // Records of one process may sit in several files (a restarted dump); they are joined by key.
  std::map<std::string, Process> processes;
  for (const std::string& file : *files) {
    auto process = read_file(file, options, report);
    if (!process.ok()) return process.status();
    Process& into = processes[process->key];
    into.key = process->key;
    for (Record& r : process->records) into.records.push_back(std::move(r));
  }
  // The world: the largest communicator; a process's global rank is its rank there.
  std::string world;
  uint32_t world_size = 0;
  for (const auto& [key, p] : processes) {
    for (const Record& r : p.records) {
      if (r.comm_size > world_size || (r.comm_size == world_size && r.comm < world)) {
        world = r.comm;
        world_size = r.comm_size;
      }
    }
  }
  if (world.empty()) return invalid_argument("no coll_perf record in the NCCL Inspector output");
  std::map<std::string, uint32_t> global_rank;  // process key -> rank
  std::map<uint32_t, std::string> rank_process;
  for (const auto& [key, p] : processes) {
    for (const Record& r : p.records) {
      if (r.comm != world) continue;
      const auto [it, inserted] = global_rank.emplace(key, r.comm_rank);
      if (!inserted && it->second != r.comm_rank) {
        return invalid_argument(fmt::format("{}: process {} reports rank {} of communicator {}, "
                                            "earlier rank {}",
                                            r.where, key, r.comm_rank, world, it->second));
      }
      const auto [owner, fresh] = rank_process.emplace(r.comm_rank, key);
      if (!fresh && owner->second != key) {
        return invalid_argument(fmt::format("{}: rank {} of communicator {} is reported by two "
                                            "processes ({} and {})",
                                            r.where, r.comm_rank, world, owner->second, key));
      }
      break;
    }
  }
  // Every communicator's members, global ranks in comm-rank order, as far as reported.
  struct Comm {
    uint32_t size = 0;
    std::map<uint32_t, uint32_t> members;  // comm rank -> global rank
  };
  std::map<std::string, Comm> comms;
  for (const auto& [key, p] : processes) {
    const auto g = global_rank.find(key);
    for (const Record& r : p.records) {
      Comm& c = comms[r.comm];
      c.size = std::max(c.size, r.comm_size);
      if (g != global_rank.end()) c.members.emplace(r.comm_rank, g->second);
    }
  }
  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_NCCL_INSPECTOR);
  for (const std::string& f : *files) header.add_source_files(f);
  header.set_world_size(world_size);
  std::set<std::string> complete;
  for (const auto& [id, c] : comms) {
    if (c.members.size() != c.size) continue;  // some member's process left no record of it
    complete.insert(id);
    v1::Communicator* out = header.add_communicators();
    out->set_id(id);
    out->set_name(id == world ? "world" : id);
    for (const auto& [comm_rank, rank] : c.members) out->add_ranks(rank);
  }
  for (const auto& [key, rank] : global_rank) {
    v1::RankInfo* info = header.add_ranks();
    info->set_rank(rank);
    info->set_host(key.substr(0, key.find(' ')));
    info->set_device(-1);
  }
  (*header.mutable_metadata())["nccl_inspector.records"] =
      "sampled: the last completed collective of each communicator per dump interval";

  std::vector<std::pair<uint32_t, const Process*>> ordered;
  for (const auto& [key, p] : processes) {
    const auto g = global_rank.find(key);
    if (g == global_rank.end()) {
      const std::string where = p.records.empty() ? key : p.records.front().where;
      const std::string what = fmt::format(
          "process {} has no record of communicator {} (the largest), so its rank is unknown; "
          "its records are skipped",
          key, world);
      if (options.strict) return invalid_argument(where + ": " + what);
      report.add_problem(options, where, what);
      continue;
    }
    ordered.emplace_back(g->second, &p);
  }
  std::sort(ordered.begin(), ordered.end());
  auto writer = TraceWriter::create(output, header);
  if (!writer.ok()) return writer.status();
  for (const auto& [rank, p] : ordered) {
    uint64_t index = 0;
    for (const Record& r : p->records) {
      if (complete.count(r.comm) == 0) {
        const std::string what = fmt::format(
            "communicator {}: not every one of its {} ranks' processes reported it, so its "
            "members are unknown; skipped",
            r.comm, comms[r.comm].size);
        if (options.strict) return invalid_argument(r.where + ": " + what);
        report.add_problem(options, r.where, what);
        continue;
      }
      v1::Op op;
      op.set_rank(rank);
      op.set_index(index++);
      op.set_kind(r.kind);
      op.set_comm(r.comm);
      op.set_count(r.bytes);
      op.set_datatype(v1::DATA_TYPE_UINT8);
      op.set_bytes(r.bytes);
      op.set_root(r.kind == v1::OP_KIND_BROADCAST || r.kind == v1::OP_KIND_REDUCE ? 0 : -1);
      op.set_op_count(r.seq);
      op.set_measured_duration_ns(r.exec_time_us * 1000);
      op.set_source(r.where);
      COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
      ++report.ops;
    }
  }
  COLLIDE_RETURN_IF_ERROR((*writer)->close());
  report.ranks = static_cast<uint32_t>(ordered.size());
  report.communicators = static_cast<uint32_t>(header.communicators_size());
  return report;
}

}  // namespace collide::traces::inspector
