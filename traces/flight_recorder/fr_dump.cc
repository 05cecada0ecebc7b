#include "traces/flight_recorder/fr_dump.h"

#include "traces/flight_recorder/torch_names.h"
#include "traces/import/json_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace collide::traces::flight_recorder {
namespace {

using nlohmann::json;

// Field access that names where a bad value sits.
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  Status error(std::string_view field, std::string_view what) const {
    return invalid_argument(fmt::format("{}.{}: {}", where_, field, what));
  }

  const json* find(std::string_view field) const {
    const auto it = object_.find(field);
    return it == object_.end() ? nullptr : &*it;
  }

  Result<uint64_t> uint(std::string_view field) const {
    const json* value = find(field);
    if (value == nullptr) return error(field, "missing");
    return as_uint(*value, field);
  }

  Result<uint64_t> as_uint(const json& value, std::string_view field) const {
    auto number = json_uint(value);
    if (!number.ok()) return error(field, number.status().message());
    return number;
  }

  Result<std::string> text(std::string_view field) const {
    const json* value = find(field);
    if (value == nullptr) return error(field, "missing");
    if (!value->is_string()) {
      return error(field, fmt::format("expected a string, got {}", value->type_name()));
    }
    return value->get<std::string>();
  }

  const std::string& where() const { return where_; }

 private:
  const json& object_;
  std::string where_;
};

// Elements over all tensors of a sizes list ([[4, 1024], [8]] -> 4104).
Result<uint64_t> total_numel(const Fields& fields, std::string_view field) {
  const json* sizes = fields.find(field);
  if (sizes == nullptr) return fields.error(field, "missing");
  if (!sizes->is_array()) return fields.error(field, "expected a list of tensor shapes");
  uint64_t total = 0;
  for (const json& shape : *sizes) {
    if (!shape.is_array()) return fields.error(field, "expected a list of tensor shapes");
    uint64_t numel = 1;
    for (const json& dim : shape) {
      auto n = fields.as_uint(dim, field);
      if (!n.ok()) return n.status();
      if (__builtin_mul_overflow(numel, *n, &numel)) {
        return fields.error(field, "tensor has more than 2^64 elements");
      }
    }
    if (__builtin_add_overflow(total, numel, &total)) {
      return fields.error(field, "tensors have more than 2^64 elements");
    }
  }
  return total;
}

Result<std::string> first_dtype(const Fields& fields, std::string_view field) {
  const json* types = fields.find(field);
  if (types == nullptr) return fields.error(field, "missing");
  if (!types->is_array()) return fields.error(field, "expected a list of type names");
  if (types->empty()) return std::string();
  if (!(*types)[0].is_string()) return fields.error(field, "expected a list of type names");
  return (*types)[0].get<std::string>();
}

// pg_config ranks: the text "[0, 1, 2]" (dumps since 2.2) or a list of integers.
Result<std::vector<uint32_t>> group_ranks(const Fields& fields) {
  const json* value = fields.find("ranks");
  if (value == nullptr) return fields.error("ranks", "missing");
  std::vector<uint32_t> ranks;
  if (value->is_array()) {
    for (const json& r : *value) {
      auto rank = fields.as_uint(r, "ranks");
      if (!rank.ok()) return rank.status();
      if (*rank > std::numeric_limits<uint32_t>::max()) return fields.error("ranks", "too large");
      ranks.push_back(static_cast<uint32_t>(*rank));
    }
    return ranks;
  }
  if (!value->is_string()) return fields.error("ranks", "expected \"[0, 1, ...]\" or a list");
  const std::string& text = value->get_ref<const std::string&>();
  auto parsed = parse_torch_rank_list(text);
  if (!parsed) return fields.error("ranks", fmt::format("'{}' is not a list of ranks", text));
  return std::move(*parsed);
}

Result<v1::OpState> parse_state(const Fields& fields) {
  auto state = fields.text("state");
  if (!state.ok()) return state.status();
  if (*state == "scheduled") return v1::OP_STATE_SCHEDULED;
  if (*state == "started") return v1::OP_STATE_STARTED;
  if (*state == "completed") return v1::OP_STATE_COMPLETED;
  return fields.error("state", fmt::format("'{}' is not scheduled, started or completed", *state));
}

Result<FrEntry> parse_entry(const json& object, uint64_t position, const std::string& file) {
  const std::string where = fmt::format("{}: entries[{}]", file, position);
  if (!object.is_object()) return invalid_argument(where + ": expected a dict");
  const Fields fields(object, where);
  FrEntry entry;
  entry.position = position;
  auto record_id = fields.uint("record_id");
  if (!record_id.ok()) return record_id.status();
  entry.record_id = *record_id;
  const json* group = fields.find("process_group");
  if (group == nullptr) return fields.error("process_group", "missing");
  if (!group->is_array() || group->empty() || !(*group)[0].is_string()) {
    return fields.error("process_group", "expected (name, desc)");
  }
  entry.pg_name = (*group)[0].get<std::string>();
  auto collective_seq = fields.uint("collective_seq_id");
  if (!collective_seq.ok()) return collective_seq.status();
  entry.collective_seq_id = *collective_seq;
  auto p2p_seq = fields.uint("p2p_seq_id");
  if (!p2p_seq.ok()) return p2p_seq.status();
  entry.p2p_seq_id = *p2p_seq;
  auto name = fields.text("profiling_name");
  if (!name.ok()) return name.status();
  entry.profiling_name = std::move(*name);
  auto in = total_numel(fields, "input_sizes");
  if (!in.ok()) return in.status();
  entry.input_numel = *in;
  auto out = total_numel(fields, "output_sizes");
  if (!out.ok()) return out.status();
  entry.output_numel = *out;
  auto in_type = first_dtype(fields, "input_dtypes");
  if (!in_type.ok()) return in_type.status();
  entry.input_dtype = std::move(*in_type);
  auto out_type = first_dtype(fields, "output_dtypes");
  if (!out_type.ok()) return out_type.status();
  entry.output_dtype = std::move(*out_type);
  auto state = parse_state(fields);
  if (!state.ok()) return state.status();
  entry.state = *state;
  auto created = fields.uint("time_created_ns");
  if (!created.ok()) return created.status();
  entry.time_created_ns = *created;
  if (const json* duration = fields.find("duration_ms");
      duration != nullptr && !duration->is_null()) {
    if (!duration->is_number() || duration->get<double>() < 0 ||
        !std::isfinite(duration->get<double>())) {
      return fields.error("duration_ms", "expected a non-negative number of milliseconds");
    }
    entry.duration_ms = duration->get<double>();
  }
  if (const json* p2p = fields.find("is_p2p"); p2p != nullptr) {
    if (!p2p->is_boolean()) return fields.error("is_p2p", "expected a bool");
    entry.is_p2p = p2p->get<bool>();
  }
  return entry;
}

}  // namespace

bool looks_like_fr_dump(const nlohmann::json& doc) {
  return doc.is_object() && doc.contains("version") &&
         (doc.contains("pg_config") || doc.contains("entries"));
}

Result<FrDump> parse_fr_dump(const nlohmann::json& doc, const std::string& file) {
  if (!looks_like_fr_dump(doc)) {
    return invalid_argument(fmt::format(
        "{}: not a Flight Recorder dump (expected a dict with version, pg_config, entries)", file));
  }
  FrDump dump;
  const json& version = doc["version"];
  dump.version = version.is_string() ? version.get<std::string>() : version.dump();
  if (const auto it = doc.find("pg_config"); it != doc.end()) {
    if (!it->is_object()) return invalid_argument(file + ": pg_config: expected a dict");
    for (const auto& [key, info] : it->items()) {
      const std::string where = fmt::format("{}: pg_config[{}]", file, key);
      if (!info.is_object()) return invalid_argument(where + ": expected a dict");
      const Fields fields(info, where);
      FrGroup group;
      group.name = key;
      if (const json* desc = fields.find("desc"); desc != nullptr && desc->is_string()) {
        group.desc = desc->get<std::string>();
      }
      auto ranks = group_ranks(fields);
      if (!ranks.ok()) return ranks.status();
      group.ranks = std::move(*ranks);
      dump.groups.emplace(key, std::move(group));
    }
  }
  if (const auto it = doc.find("entries"); it != doc.end()) {
    if (!it->is_array()) return invalid_argument(file + ": entries: expected a list");
    dump.entries.reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
      auto entry = parse_entry((*it)[i], i, file);
      if (!entry.ok()) return entry.status();
      dump.entries.push_back(std::move(*entry));
    }
  }
  return dump;
}

}  // namespace collide::traces::flight_recorder
