#include "traces/chakra/pg_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace collide::traces::chakra {
namespace {

using Json = nlohmann::json;

// The JSON list inside Python's rendering of the input list (['[{...}, ...]']), or the list itself.
std::string_view json_list_of(std::string_view values) {
  const size_t open = values.find("[{");
  const size_t close = values.rfind("}]");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return {};
  return values.substr(open, close + 2 - open);
}

// Python escapes the JSON's double quotes when the text also holds a single quote.
std::string unescape_quotes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) ++i;
    out += text[i];
  }
  return out;
}

Result<PgConfigEntry> entry_of(const Json& j, size_t index) {
  if (!j.is_object()) {
    return invalid_argument(fmt::format("process group {} is not an object", index));
  }
  PgConfigEntry e;
  try {
    const Json& name = j.at("pg_name");
    e.name = name.is_string() ? name.get<std::string>() : name.dump();
    if (j.contains("pg_desc") && j["pg_desc"].is_string()) e.desc = j["pg_desc"].get<std::string>();
    if (j.contains("ranks")) {
      for (const Json& r : j.at("ranks")) {
        // nlohmann converts -1 to a huge unsigned without complaint: check first.
        if (!r.is_number_unsigned() || r.get<uint64_t>() >= (1u << 24)) {
          return invalid_argument(
              fmt::format("process group '{}' lists {}, which is not a rank", e.name, r.dump()));
        }
        e.ranks.push_back(r.get<uint32_t>());
      }
    }
    for (const char* key : {"group_size", "pg_size"}) {
      if (j.contains(key) && j[key].is_number_unsigned()) {
        e.group_size = j[key].get<uint32_t>();
        break;
      }
    }
  } catch (const Json::exception& ex) {
    return invalid_argument(fmt::format("process group {}: {}", index, ex.what()));
  }
  return e;
}

}  // namespace

uint32_t PgConfig::world_size() const {
  uint32_t world = 0;
  for (const PgConfigEntry& g : groups) {
    if (g.ranks.empty()) world = std::max(world, g.group_size);
    for (uint32_t r : g.ranks) world = std::max(world, r + 1);
  }
  return world;
}

const PgConfigEntry* PgConfig::find(std::string_view name) const {
  for (const PgConfigEntry& g : groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

bool is_pg_config_node(const ChakraProtoMsg::Node& node) {
  return node.name().find("process_group:init") != std::string::npos;
}

Result<PgConfig> parse_pg_config(std::string_view values) {
  const std::string_view list = json_list_of(values);
  if (list.empty()) {
    return invalid_argument(
        "process_group:init holds no JSON list of process groups in its inputs");
  }
  Json doc = Json::parse(list.begin(), list.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    const std::string plain = unescape_quotes(list);
    doc = Json::parse(plain, nullptr, /*allow_exceptions=*/false);
  }
  if (doc.is_discarded() || !doc.is_array()) {
    return invalid_argument("process_group:init's process-group list is not valid JSON");
  }
  PgConfig config;
  for (size_t i = 0; i < doc.size(); ++i) {
    auto entry = entry_of(doc[i], i);
    if (!entry.ok()) return entry.status();
    config.groups.push_back(std::move(*entry));
  }
  return config;
}

}  // namespace collide::traces::chakra
