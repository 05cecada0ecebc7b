#include "traces/kineto/kineto_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "traces/flight_recorder/torch_names.h"
#include "traces/import/input_files.h"
#include "traces/import/json_fields.h"
#include "traces/op_types.h"
#include "traces/trace_io.h"

namespace collide::traces::kineto {
namespace {

using nlohmann::json;
using flight_recorder::datatype_from_torch;
using flight_recorder::nccl_count;
using flight_recorder::op_kind_from_torch;
using flight_recorder::parse_torch_rank_list;

// One collective as a rank's events describe it.
struct Collective {
  std::string where;  // "file:traceEvents[i]" of the first event
  std::string name;   // "allreduce", "_allgather_base", ...
  std::string group;  // process group name
  uint64_t seq = 0;
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  uint64_t in_nelems = 0;
  uint64_t out_nelems = 0;
  std::string dtype;
  int64_t peer = -1;   // send/recv: the args' Rank
  double ts_us = 0;    // earliest event
  double dur_us = 0;   // the kernel's, else the CPU event's
  bool from_kernel = false;
};

struct RankTrace {
  uint32_t rank = 0;
  std::string file;
  std::vector<Collective> collectives;
};

class Args {
 public:
  Args(const json& args, std::string where) : args_(args), where_(std::move(where)) {}

  Status error(std::string_view field, std::string_view what) const {
    return invalid_argument(fmt::format("{}: args[\"{}\"]: {}", where_, field, what));
  }
  const json* find(std::string_view field) const {
    const auto it = args_.find(field);
    return it == args_.end() ? nullptr : &*it;
  }
  Result<uint64_t> uint(std::string_view field) const {
    const json* v = find(field);
    if (v == nullptr) return error(field, "missing");
    auto number = json_uint(*v);
    if (!number.ok()) return error(field, number.status().message());
    return number;
  }

 private:
  const json& args_;
  std::string where_;
};

Result<double> microseconds(const json& event, std::string_view field, const std::string& where) {
  const auto it = event.find(field);
  if (it == event.end()) return invalid_argument(fmt::format("{}: {}: missing", where, field));
  // Up to about 285 years: nanoseconds then still fit 63 bits.
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0 ||
      it->get<double>() > 9e15) {
    return invalid_argument(
        fmt::format("{}: {}: expected a non-negative number of microseconds", where, field));
  }
  return it->get<double>();
}

// The collective an event with "Collective name" in its args describes.
Result<Collective> read_event(const json& event, const json& args, const std::string& where) {
  const Args a(args, where);
  Collective c;
  c.where = where;
  c.name = args["Collective name"].get<std::string>();
  const auto kind = op_kind_from_torch(c.name);
  if (!kind) return a.error("Collective name", fmt::format("'{}' is not a collective", c.name));
  c.kind = *kind;
  const json* group = a.find("Process Group Name");
  if (group == nullptr || !group->is_string()) {
    return a.error("Process Group Name", "expected the process group's name");
  }
  c.group = group->get<std::string>();
  auto seq = a.uint("Seq");
  if (!seq.ok()) return seq.status();
  c.seq = *seq;
  auto in = a.uint("In msg nelems");
  if (!in.ok()) return in.status();
  auto out = a.uint("Out msg nelems");
  if (!out.ok()) return out.status();
  c.in_nelems = *in;
  c.out_nelems = *out;
  const json* dtype = a.find("dtype");
  if (dtype == nullptr || !dtype->is_string()) return a.error("dtype", "expected a type name");
  c.dtype = dtype->get<std::string>();
  if (is_point_to_point(c.kind)) {
    auto peer = a.uint("Rank");
    if (!peer.ok()) return peer.status();
    if (*peer > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return a.error("Rank", "too large");
    }
    c.peer = static_cast<int64_t>(*peer);
  }
  auto ts = microseconds(event, "ts", where);
  if (!ts.ok()) return ts.status();
  auto dur = microseconds(event, "dur", where);
  if (!dur.ok()) return dur.status();
  c.ts_us = *ts;
  c.dur_us = *dur;
  const auto cat = event.find("cat");
  c.from_kernel = cat != event.end() && cat->is_string() && cat->get<std::string>() == "kernel";
  return c;
}

struct GroupInfo {
  uint32_t size = 0;
  std::vector<uint32_t> ranks;
  std::string where;  // where the ranks were first given
};

Result<RankTrace> read_rank_file(const std::string& path, std::map<std::string, GroupInfo>& groups,
                                 const ImportOptions& options, ImportReport& report) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(fmt::format("{}: cannot open the profiler trace", path));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return invalid_argument(fmt::format("{}: not a JSON object (a Chrome trace)", path));
  }
  RankTrace trace;
  trace.file = path;
  const auto info = doc.find("distributedInfo");
  if (info == doc.end() || !info->is_object()) {
    return invalid_argument(fmt::format(
        "{}: distributedInfo: missing (the profiler writes it for distributed jobs; it names "
        "the rank)",
        path));
  }
  auto rank = Args(*info, path + ": distributedInfo").uint("rank");
  if (!rank.ok()) return rank.status();
  if (*rank > std::numeric_limits<uint32_t>::max()) {
    return invalid_argument(path + ": distributedInfo.rank: too large");
  }
  trace.rank = static_cast<uint32_t>(*rank);
  const auto events = doc.find("traceEvents");
  if (events == doc.end() || !events->is_array()) {
    return invalid_argument(path + ": traceEvents: expected a list of events");
  }
  // The CPU event and the kernel event of one collective share group, Seq and kind (send/recv
  // count their own Seq).
  std::map<std::tuple<std::string, uint64_t, v1::OpKind>, size_t> seen;
  for (size_t i = 0; i < events->size(); ++i) {
    const json& event = (*events)[i];
    if (!event.is_object()) continue;
    const auto args = event.find("args");
    if (args == event.end() || !args->is_object()) continue;
    const auto name = args->find("Collective name");
    if (name == args->end() || !name->is_string()) continue;
    ++report.units_read;
    const std::string where = fmt::format("{}:traceEvents[{}]", path, i);
    auto c = read_event(event, *args, where);
    if (!c.ok()) {
      if (options.strict) return c.status();
      const std::string& message = c.status().message();
      report.add_problem(options, where, message.substr(std::min(message.size(), where.size() + 2)));
      continue;
    }
    if (const json* ranks_arg = Args(*args, where).find("Process Group Ranks")) {
      std::optional<std::vector<uint32_t>> ranks;
      if (ranks_arg->is_string()) ranks = parse_torch_rank_list(ranks_arg->get<std::string>());
      if (!ranks) {
        return invalid_argument(
            fmt::format("{}: args[\"Process Group Ranks\"]: expected \"[0, 1, ...]\"", where));
      }
      GroupInfo& g = groups[c->group];
      if (g.where.empty()) {
        g.ranks = *ranks;
        g.size = static_cast<uint32_t>(ranks->size());
        g.where = where;
      } else if (g.ranks != *ranks) {
        return invalid_argument(fmt::format(
            "{}: process group '{}' has other ranks than at {}", where, c->group, g.where));
      }
    }
    const auto key = std::make_tuple(c->group, c->seq, c->kind);
    const auto it = seen.find(key);
    if (it == seen.end()) {
      seen.emplace(key, trace.collectives.size());
      trace.collectives.push_back(std::move(*c));
      continue;
    }
    Collective& first = trace.collectives[it->second];
    first.ts_us = std::min(first.ts_us, c->ts_us);
    if (c->from_kernel && !first.from_kernel) {
      first.dur_us = c->dur_us;
      first.from_kernel = true;
    }
  }
  std::stable_sort(trace.collectives.begin(), trace.collectives.end(),
                   [](const Collective& a, const Collective& b) { return a.ts_us < b.ts_us; });
  return trace;
}

}  // namespace

Result<ImportReport> import_kineto(const std::vector<std::string>& inputs,
                                   const std::string& output, const ImportOptions& options) {
  auto files = expand_input_files(inputs, "profiler traces", ".json");
  if (!files.ok()) return files.status();
  ImportReport report;
  std::map<std::string, GroupInfo> groups;
  std::vector<RankTrace> ranks;
  for (const std::string& file : *files) {
    auto trace = read_rank_file(file, groups, options, report);
    if (!trace.ok()) return trace.status();
    for (const RankTrace& other : ranks) {
      if (other.rank == trace->rank) {
        return invalid_argument(fmt::format("{} and {} are both traces of rank {}", other.file,
                                            file, trace->rank));
      }
    }
    ranks.push_back(std::move(*trace));
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_KINETO);
  uint32_t world = 0;
  for (const RankTrace& r : ranks) {
    header.add_source_files(r.file);
    world = std::max(world, r.rank + 1);
    v1::RankInfo* info = header.add_ranks();
    info->set_rank(r.rank);
    info->set_device(-1);
  }
  for (const auto& [name, g] : groups) {
    v1::Communicator* c = header.add_communicators();
    c->set_id(name);
    c->set_name("pg " + name);
    for (uint32_t r : g.ranks) {
      c->add_ranks(r);
      world = std::max(world, r + 1);
    }
  }
  header.set_world_size(world);
  auto writer = TraceWriter::create(output, header);
  if (!writer.ok()) return writer.status();
  for (const RankTrace& r : ranks) {
    uint64_t index = 0;
    for (const Collective& c : r.collectives) {
      auto skip = [&](std::string what) -> Status {
        if (options.strict) return invalid_argument(c.where + ": " + what);
        report.add_problem(options, c.where, std::move(what));
        return Status::ok_status();
      };
      const auto group = groups.find(c.group);
      if (group == groups.end()) {
        COLLIDE_RETURN_IF_ERROR(skip(fmt::format(
            "process group '{}': no event gives its ranks (Process Group Ranks)", c.group)));
        continue;
      }
      const uint64_t n = group->second.size;
      const auto datatype = datatype_from_torch(c.dtype);
      if (!datatype) {
        COLLIDE_RETURN_IF_ERROR(skip(fmt::format("dtype '{}' has no NCCL type", c.dtype)));
        continue;
      }
      const uint64_t count = nccl_count(c.kind, c.in_nelems, c.out_nelems, n);
      uint64_t bytes = 0;
      if (__builtin_mul_overflow(count, datatype_size(*datatype), &bytes)) {
        COLLIDE_RETURN_IF_ERROR(skip("size passes 2^64 bytes"));
        continue;
      }
      v1::Op op;
      op.set_rank(r.rank);
      op.set_index(index++);
      op.set_kind(c.kind);
      op.set_comm(c.group);
      op.set_count(count);
      op.set_datatype(*datatype);
      op.set_bytes(bytes);
      op.set_root(-1);
      if (c.kind == v1::OP_KIND_BROADCAST || c.kind == v1::OP_KIND_REDUCE ||
          c.kind == v1::OP_KIND_GATHER || c.kind == v1::OP_KIND_SCATTER) {
        op.set_root(0);  // the args do not say which rank was the root
      }
      if (is_point_to_point(c.kind)) {
        if (c.peer < 0 || static_cast<uint64_t>(c.peer) >= n) {
          index--;
          COLLIDE_RETURN_IF_ERROR(skip(fmt::format("Rank {} is not a rank of the {} of process "
                                                   "group '{}'",
                                                   c.peer, n, c.group)));
          continue;
        }
        op.set_root(static_cast<int32_t>(c.peer));
      }
      op.set_op_count(c.seq);
      op.set_enqueue_time_ns(static_cast<uint64_t>(std::llround(c.ts_us * 1000.0)));
      op.set_measured_duration_ns(static_cast<uint64_t>(std::llround(c.dur_us * 1000.0)));
      op.set_label(c.name);
      op.set_source(c.where);
      COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
      ++report.ops;
    }
  }
  COLLIDE_RETURN_IF_ERROR((*writer)->close());
  report.ranks = static_cast<uint32_t>(ranks.size());
  report.communicators = static_cast<uint32_t>(header.communicators_size());
  return report;
}

}  // namespace collide::traces::kineto
