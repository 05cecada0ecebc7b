#include "traces/aicb/aicb_workload.h"

#include "traces/text_fields.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace collide::traces::aicb {
namespace {

// Non-negative integer; also accepts "16777216.0", as AICB prints some sizes through a float.
Result<uint64_t> parse_uint(std::string_view s, std::string_view what) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && p == s.data() + s.size()) return v;
  double d = 0;
  auto [pd, ecd] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ecd == std::errc() && pd == s.data() + s.size() && d >= 0 && d < 1.8e19 && std::isfinite(d)) {
    return static_cast<uint64_t>(std::llround(d));
  }
  return invalid_argument(fmt::format("{} '{}' is not a non-negative number", what, s));
}

Result<uint32_t> parse_degree(std::string_view s, std::string_view key) {
  auto v = parse_uint(s, key);
  if (!v.ok()) return v.status();
  if (*v == 0 || *v > (1u << 24))
    return invalid_argument(fmt::format("{} {} is out of range", key, *v));
  return static_cast<uint32_t>(*v);
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == text.size()) break;
    start = end + 1;
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

bool blank(std::string_view line) {
  return split_whitespace(line).empty();
}

Result<Layer> parse_layer(std::string_view line, uint32_t number) {
  const auto cols = split_whitespace(line);
  if (cols.size() != 12) {
    return invalid_argument(
        fmt::format("a layer line has 12 columns, this one has {}", cols.size()));
  }
  Layer layer;
  layer.name = std::string(cols[0]);
  layer.line = number;
  auto num = [&](size_t i, std::string_view what, uint64_t& out) -> Status {
    auto v = parse_uint(cols[i], what);
    if (!v.ok()) return v.status();
    out = *v;
    return {};
  };
  auto comm = [&](size_t i, std::string_view phase, Comm& out) -> Status {
    auto c = parse_comm_type(cols[i]);
    if (!c.ok())
      return invalid_argument(fmt::format("{} comm type: {}", phase, c.status().message()));
    out = *c;
    return num(i + 1, fmt::format("{} comm bytes", phase), out.bytes);
  };
  COLLIDE_RETURN_IF_ERROR(num(2, "fwd compute", layer.fwd_compute));
  COLLIDE_RETURN_IF_ERROR(comm(3, "fwd", layer.fwd));
  COLLIDE_RETURN_IF_ERROR(num(5, "ig compute", layer.ig_compute));
  COLLIDE_RETURN_IF_ERROR(comm(6, "ig", layer.ig));
  COLLIDE_RETURN_IF_ERROR(num(8, "wg compute", layer.wg_compute));
  COLLIDE_RETURN_IF_ERROR(comm(9, "wg", layer.wg));
  COLLIDE_RETURN_IF_ERROR(num(11, "update time", layer.update_time));
  return layer;
}

}  // namespace

void record_problem(ImportReport& report, const ImportOptions& options, std::string where,
                    std::string what) {
  ++report.problems_total;
  if (report.problems.size() < options.max_reported_problems) {
    report.problems.push_back({std::move(where), std::move(what)});
  }
}

std::string_view group_name(Group group) {
  switch (group) {
    case Group::kTp:
      return "tp";
    case Group::kDp:
      return "dp";
    case Group::kEp:
      return "ep";
    case Group::kDpEp:
      return "dp_ep";
    case Group::kDefault:
      break;
  }
  return "default";
}

Result<Comm> parse_comm_type(std::string_view text) {
  Comm comm;
  std::string_view base = text;
  struct Suffix {
    std::string_view text;
    Group group;
  };
  static constexpr Suffix kSuffixes[] = {
      {"_DP_EP", Group::kDpEp}, {"_EP", Group::kEp}, {"_DP", Group::kDp}, {"_TP", Group::kTp}};
  for (const Suffix& s : kSuffixes) {
    if (base.ends_with(s.text)) {
      base.remove_suffix(s.text.size());
      comm.group = s.group;
      break;
    }
  }
  if (base == "NONE") {
    comm.kind = v1::OP_KIND_UNSPECIFIED;
  } else if (base == "ALLREDUCE") {
    comm.kind = v1::OP_KIND_ALL_REDUCE;
  } else if (base == "ALLGATHER") {
    comm.kind = v1::OP_KIND_ALL_GATHER;
  } else if (base == "REDUCESCATTER") {
    comm.kind = v1::OP_KIND_REDUCE_SCATTER;
  } else if (base == "ALLTOALL") {
    comm.kind = v1::OP_KIND_ALL_TO_ALL;
  } else if (base == "BROADCAST") {
    comm.kind = v1::OP_KIND_BROADCAST;
  } else {
    return invalid_argument(fmt::format(
        "unknown comm type '{}' (NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, BROADCAST, "
        "with _EP or _DP_EP)",
        text));
  }
  return comm;
}

Result<Workload> parse_workload(std::string_view text, const std::string& file,
                                const ImportOptions& options, ImportReport& report) {
  Workload w;
  w.file = file;
  const auto lines = lines_of(text);
  if (lines.empty() || blank(lines[0])) {
    return invalid_argument(
        fmt::format("{}:1: empty; an AICB workload starts with the policy line", file));
  }
  if (text.find('\0') != std::string_view::npos) {
    return invalid_argument(fmt::format("{}: binary data; not an AICB workload text file", file));
  }
  const auto head = split_whitespace(lines[0]);
  w.policy = std::string(head[0]);
  for (size_t i = 1; i < head.size(); ++i) {
    std::string_view key = head[i];
    if (key.ends_with(':')) {
      key.remove_suffix(1);
    } else if (key != "pp_comm") {
      // SimAI's reader takes pp_comm with or without the colon, and its own example workload
      // writes `pp_comm <bytes>`; every other key has one.
      return invalid_argument(
          fmt::format("{}:1: expected `key: value` after the policy, found '{}'", file, key));
    }
    if (i + 1 >= head.size())
      return invalid_argument(fmt::format("{}:1: {} has no value", file, key));
    std::string value(head[++i]);
    if (key == "checkpoints" || key == "checkpoint_initiates") {
      // A count, then that many layer numbers (SimAI's reader takes them in this order).
      auto n = parse_uint(value, key);
      if (!n.ok() || *n > head.size() - 1 - i) {
        return invalid_argument(fmt::format(
            "{}:1: {} is a count followed by that many layer numbers; '{}' does not fit the line",
            file, key, value));
      }
      for (uint64_t k = 0; k < *n; ++k) value += fmt::format(" {}", head[++i]);
    }
    w.params[std::string(key)] = std::move(value);
  }
  auto degree = [&](std::initializer_list<std::string_view> keys, uint32_t& out) -> Status {
    for (std::string_view key : keys) {
      auto it = w.params.find(std::string(key));
      if (it == w.params.end()) continue;
      auto v = parse_degree(it->second, key);
      if (!v.ok()) return invalid_argument(fmt::format("{}:1: {}", file, v.status().message()));
      out = *v;
      return {};
    }
    return {};
  };
  COLLIDE_RETURN_IF_ERROR(degree({"model_parallel_NPU_group"}, w.tp));
  COLLIDE_RETURN_IF_ERROR(degree({"ep", "expert_parallel_npu_group"}, w.ep));
  COLLIDE_RETURN_IF_ERROR(degree({"pp"}, w.pp));
  COLLIDE_RETURN_IF_ERROR(degree({"vpp"}, w.vpp));
  COLLIDE_RETURN_IF_ERROR(degree({"ga"}, w.ga));
  COLLIDE_RETURN_IF_ERROR(degree({"all_gpus"}, w.all_gpus));
  if (auto it = w.params.find("pp_comm"); it != w.params.end()) {
    auto v = parse_uint(it->second, "pp_comm");
    if (!v.ok()) return invalid_argument(fmt::format("{}:1: {}", file, v.status().message()));
    w.pp_comm = *v;
  }

  if (lines.size() < 2) return invalid_argument(fmt::format("{}:2: missing the layer count", file));
  const auto count_cols = split_whitespace(lines[1]);
  uint64_t count = 0;
  if (count_cols.size() != 1 || !parse_uint(count_cols[0], "layer count").ok()) {
    return invalid_argument(
        fmt::format("{}:2: expected the number of layer lines, found '{}'", file, lines[1]));
  }
  count = *parse_uint(count_cols[0], "layer count");
  w.lines_read = 2;
  uint64_t layer_lines = 0;
  for (size_t i = 2; i < lines.size(); ++i) {
    ++w.lines_read;
    if (blank(lines[i])) continue;
    const auto number = static_cast<uint32_t>(i + 1);
    const std::string where = fmt::format("{}:{}", file, number);
    ++layer_lines;
    if (layer_lines > count) {
      const std::string what =
          fmt::format("more layer lines than the {} line 2 announces; ignored", count);
      if (options.strict) return invalid_argument(fmt::format("{}: {}", where, what));
      record_problem(report, options, where, what);
      break;
    }
    auto layer = parse_layer(lines[i], number);
    if (!layer.ok()) {
      if (options.strict)
        return invalid_argument(fmt::format("{}: {}", where, layer.status().message()));
      record_problem(report, options, where, layer.status().message());
      continue;
    }
    w.layers.push_back(std::move(*layer));
  }
  if (layer_lines < count) {
    const std::string what =
        fmt::format("line 2 announces {} layer lines, the file has {}", count, layer_lines);
    if (options.strict) return invalid_argument(fmt::format("{}: {}", file, what));
    record_problem(report, options, file, what);
  }
  return w;
}

}  // namespace collide::traces::aicb
