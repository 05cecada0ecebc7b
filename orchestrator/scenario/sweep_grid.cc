#include "orchestrator/scenario/sweep_grid.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/input_limits.h"
#include "common/yaml_proto.h"
#include "orchestrator/scenario/scenario.h"

namespace collide::orchestrator {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

constexpr const char* kSweepKey = "sweep";

// A sweep as found in the document: the mapping that holds the field, so that each point can put
// one of the values in the sweep's place.
struct SweepSite {
  SweptField field;
  YAML::Node parent;
  std::string key;
  YAML::Node values;  // the list
};

std::string located(const std::string& source, int line, const std::string& field, const std::string& what) {
  return fmt::format("{}:{}: {}: {}", source, line > 0 ? std::to_string(line) : "?", field, what);
}

int line_of(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

// "faults[2].probability" -> "faults[*].probability"
std::string pattern_of(const std::string& field) {
  static const std::regex index(R"(\[[0-9]+\])");
  return std::regex_replace(field, index, "[*]");
}

std::string sweepable_list() {
  std::string out;
  for (const auto& f : sweepable_fields()) out += (out.empty() ? "" : ", ") + f;
  return out;
}

Status find_sweeps(const YAML::Node& node, const std::string& path, const std::string& source,
                   std::vector<SweepSite>& sites) {
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      COLLIDE_RETURN_IF_ERROR(find_sweeps(node[i], fmt::format("{}[{}]", path, i), source, sites));
    }
    return {};
  }
  if (!node.IsMap()) return {};
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const std::string field = path.empty() ? key : path + "." + key;
    const YAML::Node& value = entry.second;
    if (!value.IsMap() || !value[kSweepKey]) {
      COLLIDE_RETURN_IF_ERROR(find_sweeps(value, field, source, sites));
      continue;
    }
    const int line = line_of(entry.first);
    const auto& allowed = sweepable_fields();
    if (std::find(allowed.begin(), allowed.end(), pattern_of(field)) == allowed.end()) {
      return invalid_argument(located(source, line, field, fmt::format("cannot be swept (the fields that can: {})",
                                                                        sweepable_list())));
    }
    if (value.size() != 1) {
      return invalid_argument(located(source, line, field, "a sweep is written {sweep: [value, value, ...]} "
                                                           "and holds nothing else"));
    }
    const YAML::Node list = value[kSweepKey];
    if (!list.IsSequence() || list.size() == 0) {
      return invalid_argument(located(source, line, field, "a sweep needs a list of at least one value: "
                                                           "{sweep: [value, value, ...]}"));
    }
    SweepSite site{{field, line, {}}, node, key, list};
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].IsScalar()) {
        return invalid_argument(located(source, line_of(list[i]), fmt::format("{}.sweep[{}]", field, i),
                                        "each value of a sweep is a single value"));
      }
      site.field.values.push_back(list[i].Scalar());
    }
    sites.push_back(std::move(site));
  }
  return {};
}

// The grid's size, refused past the limit at the field whose list takes it there.
Status check_grid_size(const std::vector<SweepSite>& sites, const std::string& source) {
  double points = 1;  // a double: a product of long lists must not wrap around
  std::string product;
  for (const auto& site : sites) product += fmt::format("{}{}", product.empty() ? "" : " x ", site.field.values.size());
  for (const auto& site : sites) {
    points *= static_cast<double>(site.field.values.size());
    if (points > limits::kMaxSweepPoints) {
      return invalid_argument(located(source, site.field.line, site.field.field,
                                      fmt::format("the sweep's grid has {} points or more ({}), past the {} a "
                                                  "scenario may run (common/input_limits.h): shorten a list or "
                                                  "split the scenario",
                                                  points, product, limits::kMaxSweepPoints)));
    }
  }
  return {};
}

// The value a point runs with, read back from its scenario: "faults[1].duration_ns" in ns.
double value_at(const Message& root, const std::string& field) {
  static const std::regex segment(R"(([a-z_0-9]+)(?:\[([0-9]+)\])?)");
  const Message* msg = &root;
  size_t start = 0;
  while (true) {
    const size_t dot = field.find('.', start);
    const std::string part = field.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::smatch m;
    if (!std::regex_match(part, m, segment)) return 0;
    const FieldDescriptor* f = msg->GetDescriptor()->FindFieldByName(m[1].str());
    if (f == nullptr) return 0;
    const auto* refl = msg->GetReflection();
    if (dot != std::string::npos) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return 0;
      if (f->is_repeated()) {
        const int index = std::stoi(m[2].str().empty() ? "0" : m[2].str());
        if (index >= refl->FieldSize(*msg, f)) return 0;
        msg = &refl->GetRepeatedMessage(*msg, f, index);
      } else {
        msg = &refl->GetMessage(*msg, f);
      }
      start = dot + 1;
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE: return refl->GetDouble(*msg, f);
      case FieldDescriptor::CPPTYPE_FLOAT: return refl->GetFloat(*msg, f);
      case FieldDescriptor::CPPTYPE_UINT32: return refl->GetUInt32(*msg, f);
      case FieldDescriptor::CPPTYPE_UINT64: return static_cast<double>(refl->GetUInt64(*msg, f));
      case FieldDescriptor::CPPTYPE_INT32: return refl->GetInt32(*msg, f);
      case FieldDescriptor::CPPTYPE_INT64: return static_cast<double>(refl->GetInt64(*msg, f));
      default: return 0;
    }
  }
}

// Two values of one list that run as the same value ("1%" and "0.01") would make two points one.
Status check_distinct(const SweptField& field, const std::vector<double>& values, const std::string& source) {
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (values[i] == values[j]) {
        return invalid_argument(located(source, field.line, field.field,
                                        fmt::format("'{}' and '{}' are the same value: each value of a sweep "
                                                    "is given once",
                                                    field.values[j], field.values[i])));
      }
    }
  }
  return {};
}

Result<ScenarioGrid> expand(std::vector<SweepSite>& sites, const YAML::Node& document, const std::string& source) {
  ScenarioGrid grid;
  for (const auto& site : sites) grid.fields.push_back(site.field);
  size_t total = 1;
  for (const auto& site : sites) total *= site.field.values.size();
  // Each value of each list as it ran, seen at the first point that holds it.
  std::vector<std::vector<double>> seen(sites.size());
  for (size_t i = 0; i < sites.size(); ++i) seen[i].assign(sites[i].field.values.size(), -1);
  for (size_t k = 0; k < total; ++k) {
    std::vector<size_t> at(sites.size());
    size_t rest = k;
    for (size_t i = sites.size(); i-- > 0;) {
      at[i] = rest % sites[i].field.values.size();
      rest /= sites[i].field.values.size();
    }
    SweepPoint point;
    for (size_t i = 0; i < sites.size(); ++i) {
      // The value's own node (with its line) takes the sweep's place in the document.
      sites[i].parent[sites[i].key] = sites[i].values[at[i]];
      v1::SweepSetting& setting = point.settings.emplace_back();
      setting.set_field(sites[i].field.field);
      setting.set_text(sites[i].field.values[at[i]]);
    }
    auto scenario = load_scenario_document(document, source);
    if (!scenario.ok()) {
      if (point.settings.empty()) return scenario.status();
      return invalid_argument(fmt::format("{} (at the sweep's point {} of {}: {})", scenario.status().message(),
                                          k + 1, total, point_label(point.settings)));
    }
    for (size_t i = 0; i < sites.size(); ++i) {
      point.settings[i].set_value(value_at(*scenario, sites[i].field.field));
      seen[i][at[i]] = point.settings[i].value();
    }
    point.scenario = std::move(scenario).value();
    grid.points.push_back(std::move(point));
  }
  for (size_t i = 0; i < sites.size(); ++i) {
    COLLIDE_RETURN_IF_ERROR(check_distinct(sites[i].field, seen[i], source));
  }
  return grid;
}

}  // namespace

const std::vector<std::string>& sweepable_fields() {
  static const std::vector<std::string> fields = {
      "faults[*].probability",
      "faults[*].duration_ns",
      "faults[*].mtbf_ns",
      "faults[*].detection_ns",
      "faults[*].convergence_ns",
      "transport.qps_per_connection",
      "runs.variants[*].transport.qps_per_connection",
      "workload.collectives.bytes",
      "workload.incast.bytes",
  };
  return fields;
}

Result<ScenarioGrid> expand_scenario_grid(const YAML::Node& document, const std::string& path) {
  std::vector<SweepSite> sites;
  COLLIDE_RETURN_IF_ERROR(find_sweeps(document, "", path, sites));
  COLLIDE_RETURN_IF_ERROR(check_grid_size(sites, path));
  return expand(sites, document, path);
}

Result<ScenarioGrid> load_scenario_grid(const std::string& path) {
  auto document = config::read_yaml_file(path);
  if (!document.ok()) return document.status();
  return expand_scenario_grid(*document, path);
}

}  // namespace collide::orchestrator
