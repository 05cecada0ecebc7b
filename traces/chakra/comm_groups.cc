#include "traces/chakra/comm_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

namespace collide::traces::chakra {
namespace {

using Json = nlohmann::ordered_json;

uint64_t line_of(std::string_view text, size_t byte) {
  byte = std::min(byte, text.size());
  return 1 + static_cast<uint64_t>(
                 std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n'));
}

Result<std::vector<uint32_t>> rank_list(const Json& value, const std::string& where) {
  if (!value.is_array())
    return invalid_argument(fmt::format("{}: expected a list of ranks", where));
  std::vector<uint32_t> ranks;
  std::set<uint32_t> seen;
  for (const Json& r : value) {
    if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > UINT32_MAX) {
      return invalid_argument(
          fmt::format("{}: rank {} is not a non-negative integer", where, r.dump()));
    }
    const auto rank = r.get<uint32_t>();
    if (!seen.insert(rank).second) {
      return invalid_argument(fmt::format("{}: rank {} appears twice", where, rank));
    }
    ranks.push_back(rank);
  }
  return ranks;
}

Result<CommGroup> group_object(const Json& value, std::string fallback_name,
                               const std::string& where) {
  CommGroup group;
  group.name = std::move(fallback_name);
  if (value.contains("pg_name") && value["pg_name"].is_string() && group.name.empty()) {
    group.name = value["pg_name"].get<std::string>();
  }
  if (group.name.empty() && value.contains("pg_id")) {
    const Json& id = value["pg_id"];
    group.name = id.is_string() ? id.get<std::string>() : id.dump();
  }
  if (group.name.empty()) return invalid_argument(fmt::format("{}: group has no pg_name", where));
  if (!value.contains("ranks"))
    return invalid_argument(fmt::format("{}: group has no \"ranks\"", where));
  auto ranks = rank_list(value["ranks"], where);
  if (!ranks.ok()) return ranks.status();
  group.ranks = std::move(*ranks);
  return group;
}

}  // namespace

Result<std::vector<CommGroup>> parse_comm_groups(std::string_view text, const std::string& source) {
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return invalid_argument(
        fmt::format("{}:{}: not valid JSON: {}", source, line_of(text, e.byte), e.what()));
  }
  std::vector<CommGroup> groups;
  std::set<std::string> names;
  auto add = [&](Result<CommGroup> group) -> Status {
    if (!group.ok()) return group.status();
    if (!names.insert(group->name).second) {
      return invalid_argument(fmt::format("{}: group '{}' appears twice", source, group->name));
    }
    groups.push_back(std::move(*group));
    return {};
  };
  if (doc.is_object()) {
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const std::string where = fmt::format("{}: group '{}'", source, it.key());
      if (it.value().is_object()) {
        COLLIDE_RETURN_IF_ERROR(add(group_object(it.value(), it.key(), where)));
      } else {
        auto ranks = rank_list(it.value(), where);
        if (!ranks.ok()) return ranks.status();
        COLLIDE_RETURN_IF_ERROR(add(CommGroup{it.key(), std::move(*ranks)}));
      }
    }
  } else if (doc.is_array()) {
    for (size_t i = 0; i < doc.size(); ++i) {
      const std::string where = fmt::format("{}: entry {}", source, i);
      if (!doc[i].is_object())
        return invalid_argument(fmt::format("{}: expected an object", where));
      COLLIDE_RETURN_IF_ERROR(add(group_object(doc[i], "", where)));
    }
  } else {
    return invalid_argument(fmt::format(
        "{}: expected an object mapping process groups to rank lists, or a list of groups",
        source));
  }
  return groups;
}

Result<std::vector<CommGroup>> read_comm_groups(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(fmt::format("{}: cannot open the comm-group file", path));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_comm_groups(text, path);
}

Status write_comm_groups(const std::string& path, const std::vector<CommGroup>& groups) {
  Json doc = Json::object();
  for (const CommGroup& g : groups) doc[g.name] = g.ranks;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return errno_status(errno, fmt::format("creating {}", path));
  out << doc.dump(1) << "\n";
  out.close();
  if (!out) return errno_status(errno, fmt::format("writing {}", path));
  return {};
}

}  // namespace collide::traces::chakra
