#include "traces/nccl_tests/nccl_tests_parse.h"

#include "traces/text_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>

namespace collide::traces::nccl_tests {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <typename T>
bool parse_num(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

v1::DataType datatype_of(std::string_view type) {
  static const std::pair<std::string_view, v1::DataType> kTypes[] = {
      {"int8", v1::DATA_TYPE_INT8},         {"char", v1::DATA_TYPE_INT8},
      {"uint8", v1::DATA_TYPE_UINT8},       {"int32", v1::DATA_TYPE_INT32},
      {"int", v1::DATA_TYPE_INT32},         {"uint32", v1::DATA_TYPE_UINT32},
      {"int64", v1::DATA_TYPE_INT64},       {"uint64", v1::DATA_TYPE_UINT64},
      {"half", v1::DATA_TYPE_FLOAT16},      {"float16", v1::DATA_TYPE_FLOAT16},
      {"float", v1::DATA_TYPE_FLOAT32},     {"float32", v1::DATA_TYPE_FLOAT32},
      {"double", v1::DATA_TYPE_FLOAT64},    {"float64", v1::DATA_TYPE_FLOAT64},
      {"bfloat16", v1::DATA_TYPE_BFLOAT16}, {"f8e4m3", v1::DATA_TYPE_FP8_E4M3},
      {"f8e5m2", v1::DATA_TYPE_FP8_E5M2},
  };
  for (const auto& [name, dt] : kTypes) {
    if (name == type) return dt;
  }
  return v1::DATA_TYPE_UNSPECIFIED;
}

// The columns of one result half (out-of-place or in-place), as header positions; -1 if absent.
struct HalfColumns {
  int time = -1, algbw = -1, busbw = -1, wrong = -1;
  bool cpu = false;
  bool error_column = false;  // old header: the largest error, not a count
};

struct Columns {
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  HalfColumns half[2];
  size_t width = 0;        // tokens in a row
  bool timestamp = false;  // rows end with "YYYY-mm-dd HH:MM:SS" (two tokens, one header label)
};

Columns columns_from_header(const std::vector<std::string_view>& names) {
  Columns c;
  int time_seen = 0, algbw_seen = 0, busbw_seen = 0, wrong_seen = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string_view n = names[i];
    const int at = static_cast<int>(i);
    if (n == "size" || n == "bytes")
      c.size = at;
    else if (n == "count" || n == "N")
      c.count = at;
    else if (n == "type")
      c.type = at;
    else if (n == "redop" || n == "op")
      c.redop = at;
    else if (n == "root")
      c.root = at;
    else if ((n == "time" || n == "cputime") && time_seen < 2) {
      c.half[time_seen].time = at;
      c.half[time_seen++].cpu = n == "cputime";
    } else if (n == "algbw" && algbw_seen < 2)
      c.half[algbw_seen++].algbw = at;
    else if (n == "busbw" && busbw_seen < 2)
      c.half[busbw_seen++].busbw = at;
    else if ((n == "#wrong" || n == "error" || n == "res") && wrong_seen < 2) {
      c.half[wrong_seen].wrong = at;
      c.half[wrong_seen++].error_column = n != "#wrong";
    } else if (n == "timestamp")
      c.timestamp = true;
  }
  c.width = names.size() + (c.timestamp ? 1 : 0);
  return c;
}

Status read_half(const std::vector<std::string_view>& t, const HalfColumns& h,
                 v1::NcclTestsResult& out) {
  if (h.time < 0 || h.algbw < 0 || h.busbw < 0)
    return invalid_argument("the header lacks time/algbw/busbw");
  double time = 0, alg = 0, bus = 0;
  if (!parse_num(t[static_cast<size_t>(h.time)], time) ||
      !parse_num(t[static_cast<size_t>(h.algbw)], alg) ||
      !parse_num(t[static_cast<size_t>(h.busbw)], bus)) {
    return invalid_argument("time, algbw or busbw is not a number");
  }
  out.set_time_us(time);
  out.set_algbw_gbps(alg);
  out.set_busbw_gbps(bus);
  out.set_cpu_time(h.cpu);
  if (h.wrong >= 0) {
    const std::string_view w = t[static_cast<size_t>(h.wrong)];
    double v = 0;
    if (w == "N/A") {
      // not checked
    } else if (!parse_num(w, v)) {
      return invalid_argument(fmt::format("'{}' is neither a number nor N/A", w));
    } else if (h.error_column) {
      out.set_max_error(v);
    } else {
      out.set_wrong(static_cast<int64_t>(std::llround(v)));
    }
  }
  return {};
}

Result<v1::NcclTestsRow> read_row(const std::vector<std::string_view>& t, const Columns& c) {
  if (t.size() != c.width) {
    return invalid_argument(
        fmt::format("a row has {} columns under this header, this one has {}", c.width, t.size()));
  }
  v1::NcclTestsRow row;
  uint64_t size = 0, count = 0;
  if (c.size < 0 || !parse_num(t[static_cast<size_t>(c.size)], size))
    return invalid_argument("size is not a number");
  row.set_size_bytes(size);
  if (c.count >= 0) {
    if (!parse_num(t[static_cast<size_t>(c.count)], count))
      return invalid_argument("count is not a number");
    row.set_count(count);
  }
  if (c.type >= 0) {
    row.set_type(std::string(t[static_cast<size_t>(c.type)]));
    row.set_datatype(datatype_of(row.type()));
  }
  if (c.redop >= 0) row.set_redop(std::string(t[static_cast<size_t>(c.redop)]));
  row.set_root(-1);
  if (c.root >= 0) {
    int32_t root = -1;
    if (!parse_num(t[static_cast<size_t>(c.root)], root))
      return invalid_argument("root is not a number");
    row.set_root(root);
  }
  COLLIDE_RETURN_IF_ERROR(read_half(t, c.half[0], *row.mutable_out_of_place()));
  if (c.half[1].time >= 0)
    COLLIDE_RETURN_IF_ERROR(read_half(t, c.half[1], *row.mutable_in_place()));
  return row;
}

std::string test_from_anywhere(std::string_view text) {
  static const std::regex kPerf(R"(([A-Za-z0-9]+(?:_[A-Za-z0-9]+)*_perf)(?:_mpi)?\b)");
  std::cmatch m;
  if (std::regex_search(text.data(), text.data() + text.size(), m, kPerf)) return m[1].str();
  return {};
}

// Launchers put text before each line ("[1,0]<stdout>:"); the table starts after it.
std::string_view strip_launcher(std::string_view line) {
  const size_t tag = line.find("<stdout>:");
  if (tag != std::string_view::npos) line.remove_prefix(tag + 9);
  return line;
}

void finish(v1::NcclTestsBaseline& b, const std::string& file) {
  if (b.test().empty()) b.set_test(test_from_anywhere(file));
  b.set_kind(kind_from_test_name(b.test()));
  b.set_source_file(file);
}

}  // namespace

v1::OpKind kind_from_test_name(std::string_view name) {
  const size_t slash = name.find_last_of('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  if (name.ends_with("_mpi")) name.remove_suffix(4);
  if (name.ends_with("_perf")) name.remove_suffix(5);
  static const std::pair<std::string_view, v1::OpKind> kNames[] = {
      {"all_reduce", v1::OP_KIND_ALL_REDUCE},
      {"all_gather", v1::OP_KIND_ALL_GATHER},
      {"reduce_scatter", v1::OP_KIND_REDUCE_SCATTER},
      {"alltoall", v1::OP_KIND_ALL_TO_ALL},
      {"alltoallv", v1::OP_KIND_ALL_TO_ALLV},
      {"broadcast", v1::OP_KIND_BROADCAST},
      {"reduce", v1::OP_KIND_REDUCE},
      {"gather", v1::OP_KIND_GATHER},
      {"scatter", v1::OP_KIND_SCATTER},
      {"sendrecv", v1::OP_KIND_SEND},
  };
  for (const auto& [n, kind] : kNames) {
    if (n == name) return kind;
  }
  return v1::OP_KIND_UNSPECIFIED;
}

Result<Parsed> parse_text(std::string_view text, const std::string& file) {
  if (text.find('\0') != std::string_view::npos) {
    return invalid_argument(fmt::format("{}: binary data; not nccl-tests output", file));
  }
  Parsed p;
  v1::NcclTestsBaseline& b = p.baseline;
  std::optional<Columns> columns;
  static const std::regex kVersion(R"(NCCL version ([^\s]+))");
  static const std::regex kIters(R"(warmup iters: (\d+) iters: (\d+))");
  uint32_t number = 0;
  uint32_t header_line = 0;  // the first table header's line
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    line = trim(strip_launcher(line));
    if (line.empty()) continue;
    std::cmatch m;
    if (b.nccl_version().empty() &&
        std::regex_search(line.data(), line.data() + line.size(), m, kVersion)) {
      b.set_nccl_version(m[1].str());
    }
    if (line.front() == '#') {
      std::string_view body = trim(line.substr(1));
      if (body.starts_with("nccl-tests version")) {
        const auto t = split_whitespace(body);
        if (t.size() > 2) b.set_nccl_tests_version(std::string(t[2]));
      } else if (body.starts_with("Collective test starting:")) {
        b.set_test(std::string(trim(body.substr(25))));
      } else if (body.starts_with("Rank") && body.find("Pid") != std::string_view::npos) {
        b.set_ranks(b.ranks() + 1);
      } else if (body.starts_with("Avg bus bandwidth")) {
        const size_t colon = body.find(':');
        double v = 0;
        const auto t = colon == std::string_view::npos ? std::vector<std::string_view>{}
                                                       : split_whitespace(body.substr(colon + 1));
        if (!t.empty() && parse_num(t[0], v)) b.set_avg_busbw_gbps(v);
      } else if (body.starts_with("Out of bounds values")) {
        const size_t colon = body.find(':');
        uint64_t v = 0;
        const auto t = colon == std::string_view::npos ? std::vector<std::string_view>{}
                                                       : split_whitespace(body.substr(colon + 1));
        if (!t.empty() && parse_num(t[0], v)) b.set_out_of_bounds(v);
      } else if (std::regex_search(body.data(), body.data() + body.size(), m, kIters)) {
        uint32_t warmup = 0, iters = 0;
        if (!parse_num(std::string_view(m[1].first, m[1].second), warmup) ||
            !parse_num(std::string_view(m[2].first, m[2].second), iters)) {
          return invalid_argument(fmt::format(
              "{}:{}: warmup iters or iters is not a 32-bit count: '{}'", file, number, body));
        }
        b.set_warmup_iterations(warmup);
        b.set_iterations(iters);
      } else {
        const auto names = split_whitespace(body);
        if (std::find(names.begin(), names.end(), "size") != names.end() &&
            std::find(names.begin(), names.end(), "busbw") != names.end()) {
          columns = columns_from_header(names);
          if (header_line == 0) header_line = number;
        }
      }
      continue;
    }
    // A row starts with the size; anything else (NCCL log lines, launcher chatter) is not ours.
    if (!columns || !std::isdigit(static_cast<unsigned char>(line.front()))) {
      if (b.test().empty()) b.set_test(test_from_anywhere(line));
      continue;
    }
    const auto tokens = split_whitespace(line);
    auto row = read_row(tokens, *columns);
    if (!row.ok()) {
      p.problems.push_back(fmt::format("{}:{}: {}", file, number, row.status().message()));
      continue;
    }
    row->set_line(number);
    *b.add_rows() = std::move(*row);
  }
  if (!columns) {
    return invalid_argument(fmt::format(
        "{}: no nccl-tests result table (a `#  size  count  type ... busbw` header line)", file));
  }
  if (b.rows_size() == 0) {
    // A header and nothing under it: the run died, hung or was cut before its first size.
    return invalid_argument(fmt::format(
        "{}:{}: the nccl-tests table has a header but no result rows{}; the run did not finish "
        "a single size, so there is no baseline in this file",
        file, header_line,
        p.problems.empty() ? std::string()
                           : fmt::format(" that could be read ({})", p.problems.front())));
  }
  b.set_source_format("text");
  finish(b, file);
  return p;
}

Result<Parsed> parse_json(std::string_view text, const std::string& file) {
  using Json = nlohmann::json;
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    const auto line =
        1 + std::count(text.begin(),
                       text.begin() + static_cast<long>(std::min(e.byte, text.size())), '\n');
    return invalid_argument(fmt::format("{}:{}: not valid JSON: {}", file, line, e.what()));
  }
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    return invalid_argument(
        fmt::format("{}: not an nccl-tests JSON report (no \"results\" list)", file));
  }
  Parsed p;
  v1::NcclTestsBaseline& b = p.baseline;
  b.set_source_format("json");
  try {
    if (doc.contains("nccl_version") && doc["nccl_version"].is_number_integer()) {
      const int v = doc["nccl_version"].get<int>();
      // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + minor*100 +
      // patch before.
      b.set_nccl_version(v >= 20900 ? fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
                                    : fmt::format("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100));
    }
    if (doc.contains("args") && doc["args"].is_array() && !doc["args"].empty() &&
        doc["args"][0].is_string()) {
      std::string bin = doc["args"][0].get<std::string>();
      const size_t slash = bin.find_last_of('/');
      if (slash != std::string::npos) bin = bin.substr(slash + 1);
      b.set_test(bin);
    }
    if (doc.contains("config") && doc["config"].is_object()) {
      const Json& c = doc["config"];
      if (c.contains("iterations") && c["iterations"].is_number_integer())
        b.set_iterations(c["iterations"].get<uint32_t>());
      if (c.contains("warmup_iters") && c["warmup_iters"].is_number_integer())
        b.set_warmup_iterations(c["warmup_iters"].get<uint32_t>());
      if (c.contains("devices") && c["devices"].is_array())
        b.set_ranks(static_cast<uint32_t>(c["devices"].size()));
    }
    if (doc.contains("average_bus_bandwidth") && doc["average_bus_bandwidth"].is_object() &&
        doc["average_bus_bandwidth"].contains("bandwidth") &&
        doc["average_bus_bandwidth"]["bandwidth"].is_number()) {
      b.set_avg_busbw_gbps(doc["average_bus_bandwidth"]["bandwidth"].get<double>());
    }
    if (doc.contains("out_of_bounds") && doc["out_of_bounds"].is_object() &&
        doc["out_of_bounds"].contains("count") &&
        doc["out_of_bounds"]["count"].is_number_integer()) {
      b.set_out_of_bounds(doc["out_of_bounds"]["count"].get<uint64_t>());
    }
    auto half = [](const Json& h, v1::NcclTestsResult& out) {
      const bool cpu = h.contains("cpu_time");
      out.set_cpu_time(cpu);
      out.set_time_us(h.at(cpu ? "cpu_time" : "time").get<double>());
      out.set_algbw_gbps(h.at("alg_bw").get<double>());
      out.set_busbw_gbps(h.at("bus_bw").get<double>());
      if (h.contains("nwrong") && h["nwrong"].is_number())
        out.set_wrong(std::llround(h["nwrong"].get<double>()));
    };
    const Json& results = doc["results"];
    for (size_t i = 0; i < results.size(); ++i) {
      const Json& r = results[i];
      try {
        v1::NcclTestsRow row;
        row.set_size_bytes(r.at("size").get<uint64_t>());
        row.set_count(r.at("count").get<uint64_t>());
        row.set_type(r.at("type").get<std::string>());
        row.set_datatype(datatype_of(row.type()));
        row.set_redop(r.at("redop").get<std::string>());
        row.set_root(-1);
        if (r.contains("root")) {
          const Json& root = r["root"];
          int32_t v = -1;
          if (root.is_number_integer())
            v = root.get<int32_t>();
          else if (root.is_string())
            (void)parse_num(trim(root.get_ref<const std::string&>()), v);
          row.set_root(v);
        }
        if (r.contains("out_of_place") && r["out_of_place"].is_object())
          half(r["out_of_place"], *row.mutable_out_of_place());
        if (r.contains("in_place") && r["in_place"].is_object())
          half(r["in_place"], *row.mutable_in_place());
        *b.add_rows() = std::move(row);
      } catch (const Json::exception& e) {
        p.problems.push_back(fmt::format("{}: results[{}]: {}", file, i, e.what()));
      }
    }
  } catch (const Json::exception& e) {
    return invalid_argument(fmt::format("{}: unexpected JSON content: {}", file, e.what()));
  }
  if (b.rows_size() == 0) {
    return invalid_argument(fmt::format(
        "{}: the nccl-tests JSON report has no results{}", file,
        p.problems.empty() ? std::string() : fmt::format(" that could be read ({})",
                                                         p.problems.front())));
  }
  finish(b, file);
  return p;
}

namespace {

// rccl-tests' "name" ("AllReduce", "AlltoAll", "ReduceScatter") as the nccl-tests binary name.
std::string test_from_rccl_name(std::string_view name) {
  std::string snake;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    // "AlltoAll" is one word in nccl-tests' names (alltoall_perf).
    if (std::isupper(c) && i > 0 && !name.substr(0, i).ends_with("Allto")) snake += '_';
    snake += static_cast<char>(std::tolower(c));
  }
  return snake + "_perf";
}

// One rccl-tests record into its row: records of one size (out-of-place, then in-place) share it.
Status add_rccl_record(const nlohmann::json& r, v1::NcclTestsBaseline& b) {
  const uint64_t size = r.at("size").get<uint64_t>();
  const std::string type = r.contains("type") ? r["type"].get<std::string>() : std::string();
  const std::string redop = r.contains("redop") ? r["redop"].get<std::string>() : std::string();
  const bool in_place = r.contains("inPlace") && r["inPlace"].get<int64_t>() != 0;
  // Everything read before anything is stored, so a bad record leaves no half row behind.
  v1::NcclTestsResult result;
  result.set_time_us(r.at("time").get<double>());
  result.set_algbw_gbps(r.at("algBw").get<double>());
  result.set_busbw_gbps(r.at("busBw").get<double>());
  // The count of wrong elements is a string ("0", or "N/A" when not checked): "#wrong" in the
  // line-per-record files, "wrong" in the list.
  for (const char* key : {"#wrong", "wrong"}) {
    if (!r.contains(key)) continue;
    const nlohmann::json& w = r[key];
    int64_t v = 0;
    if (w.is_number_integer()) {
      result.set_wrong(w.get<int64_t>());
    } else if (w.is_string() && parse_num(trim(w.get_ref<const std::string&>()), v)) {
      result.set_wrong(v);
    } else if (!(w.is_string() && w.get_ref<const std::string&>() == "N/A")) {
      return invalid_argument(fmt::format("{} '{}' is neither a count nor N/A", key, w.dump()));
    }
    break;
  }
  v1::NcclTestsRow* row = nullptr;
  if (b.rows_size() > 0) {
    v1::NcclTestsRow& last = *b.mutable_rows(b.rows_size() - 1);
    const bool free_half = in_place ? !last.has_in_place() : !last.has_out_of_place();
    if (last.size_bytes() == size && last.type() == type && last.redop() == redop && free_half)
      row = &last;
  }
  if (row == nullptr) {
    row = b.add_rows();
    row->set_size_bytes(size);
    row->set_type(type);
    row->set_datatype(datatype_of(type));
    row->set_redop(redop);
    row->set_root(-1);
  }
  if (r.contains("count") && r["count"].is_number_unsigned())
    row->set_count(r["count"].get<uint64_t>());
  if (r.contains("root") && r["root"].is_number_integer()) row->set_root(r["root"].get<int32_t>());
  *(in_place ? row->mutable_in_place() : row->mutable_out_of_place()) = std::move(result);
  // Without MPI "gpus" counts every GPU; with MPI "ranks" counts processes of "gpusPerRank" each.
  auto count_of = [&](const char* key) -> uint32_t {
    return r.contains(key) && r[key].is_number_unsigned() ? r[key].get<uint32_t>() : 0;
  };
  if (const uint32_t gpus = count_of("gpus"); gpus != 0) {
    b.set_ranks(gpus);
  } else if (const uint32_t ranks = count_of("ranks"); ranks != 0) {
    b.set_ranks(ranks * std::max<uint32_t>(1, count_of("gpusPerRank")));
  }
  if (b.test().empty() && r.contains("name") && r["name"].is_string())
    b.set_test(test_from_rccl_name(r["name"].get_ref<const std::string&>()));
  return {};
}

bool is_rccl_record(const nlohmann::json& j) {
  return j.is_object() && j.contains("busBw") && j.contains("size");
}

}  // namespace

Result<Parsed> parse_rccl_json(std::string_view text, const std::string& file) {
  using Json = nlohmann::json;
  Parsed p;
  v1::NcclTestsBaseline& b = p.baseline;
  b.set_source_format("json");
  auto add = [&](const Json& r, const std::string& where) {
    try {
      if (!is_rccl_record(r)) {
        p.problems.push_back(fmt::format("{}: not an rccl-tests result (no size and busBw)", where));
        return;
      }
      const Status s = add_rccl_record(r, b);
      if (!s.ok()) p.problems.push_back(fmt::format("{}: {}", where, s.message()));
    } catch (const Json::exception& e) {
      p.problems.push_back(fmt::format("{}: {}", where, e.what()));
    }
  };
  const std::string_view body = trim(text);
  if (!body.empty() && body.front() == '[') {
    // Newer rccl-tests write one JSON list of the records.
    Json doc;
    try {
      doc = Json::parse(body.begin(), body.end());
    } catch (const Json::parse_error& e) {
      return invalid_argument(fmt::format("{}: not valid JSON: {}", file, e.what()));
    }
    for (size_t i = 0; i < doc.size(); ++i) add(doc[i], fmt::format("{}: [{}]", file, i));
  } else {
    // --output_file with the json format: one record per line (JSON Lines).
    uint32_t number = 0;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view line = trim(text.substr(start, end - start));
      start = end + 1;
      ++number;
      if (line.empty()) continue;
      const std::string where = fmt::format("{}:{}", file, number);
      Json record;
      try {
        record = Json::parse(line.begin(), line.end());
      } catch (const Json::parse_error& e) {
        p.problems.push_back(fmt::format("{}: not valid JSON: {}", where, e.what()));
        continue;
      }
      add(record, where);
    }
  }
  if (b.rows_size() == 0) {
    return invalid_argument(fmt::format(
        "{}: no rccl-tests results (records with size, time, algBw, busBw){}", file,
        p.problems.empty() ? std::string() : fmt::format(" ({})", p.problems.front())));
  }
  finish(b, file);
  return p;
}

Result<Parsed> read_baseline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(fmt::format("{}: cannot open", path));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string_view body = trim(text);
  // A JSON list, not a launcher's "[1,0]<stdout>:" before a text table.
  if (body.starts_with('[') && (trim(body.substr(1)).starts_with('{') || trim(body.substr(1)) == "]"))
    return parse_rccl_json(text, path);
  if (!body.empty() && body.front() == '{') {
    // nccl-tests write one object with "results"; rccl-tests one object per result, per line.
    const size_t first_line_end = body.find('\n');
    nlohmann::json first;
    try {
      first = nlohmann::json::parse(body.substr(0, first_line_end));
    } catch (const nlohmann::json::parse_error&) {
      return parse_json(text, path);  // a multi-line document (or not JSON: its error says where)
    }
    if (is_rccl_record(first)) return parse_rccl_json(text, path);
    return parse_json(text, path);
  }
  return parse_text(text, path);
}

}  // namespace collide::traces::nccl_tests
