#include "common/yaml_proto.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "common/units.h"

namespace collide::config {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

struct Context {
  std::string source;
  FieldLines* lines = nullptr;
};

Status error_at(const Context& ctx, const YAML::Node& node, const std::string& path,
                const std::string& what) {
  const int line = node.Mark().line;
  return invalid_argument(fmt::format("{}:{}: {}: {}", ctx.source,
                                      line >= 0 ? std::to_string(line + 1) : "?",
                                      path.empty() ? "(top)" : path, what));
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Multiplier that turns `unit` into the field's own unit, judged by the field name's suffix; the
// units and their meaning are common/units.h's.
std::optional<double> unit_scale(const std::string& field, const std::string& unit) {
  if (unit.empty()) return 1.0;
  if (field == "bytes" || ends_with(field, "_bytes")) return units::bytes_per_unit(unit);
  double field_ns = 0;
  if (ends_with(field, "_ns")) field_ns = 1;
  if (ends_with(field, "_us")) field_ns = 1e3;
  if (ends_with(field, "_ms")) field_ns = 1e6;
  if (ends_with(field, "_s")) field_ns = 1e9;
  if (field_ns > 0) {
    const auto ns = units::ns_per_unit(unit);
    if (!ns) return std::nullopt;
    return *ns / field_ns;
  }
  if (unit == "%") return 0.01;
  return std::nullopt;
}

Status set_scalar(const Context& ctx, const YAML::Node& node, const std::string& path,
                  Message& msg, const FieldDescriptor* f, bool add);

Status fill_message(const Context& ctx, const YAML::Node& node, const std::string& path,
                    Message& msg) {
  if (node.IsNull()) return {};
  if (!node.IsMap()) return error_at(ctx, node, path, "expected a mapping of fields");
  const Descriptor* desc = msg.GetDescriptor();
  const Reflection* refl = msg.GetReflection();
  // yaml-cpp keeps both entries of a key given twice; which one was meant cannot be known.
  std::map<std::string, int> first_line;
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const std::string field_path = path.empty() ? key : path + "." + key;
    if (auto [it, fresh] = first_line.emplace(key, entry.first.Mark().line + 1); !fresh) {
      return error_at(ctx, entry.first, field_path, fmt::format("given twice (first on line {})", it->second));
    }
    if (ctx.lines != nullptr) (*ctx.lines)[field_path] = entry.first.Mark().line + 1;
    const FieldDescriptor* f = desc->FindFieldByName(key);
    if (f == nullptr) {
      std::string known;
      for (int i = 0; i < desc->field_count(); ++i) {
        known += (i ? ", " : "") + desc->field(i)->name();
      }
      return error_at(ctx, entry.first, field_path,
                      fmt::format("unknown field (known here: {})", known));
    }
    const YAML::Node& value = entry.second;
    if (f->is_map()) {
      if (!value.IsMap()) return error_at(ctx, value, field_path, "expected a mapping");
      const FieldDescriptor* key_field = f->message_type()->map_key();
      const FieldDescriptor* value_field = f->message_type()->map_value();
      for (const auto& kv : value) {
        Message* item = refl->AddMessage(&msg, f);
        const std::string item_path = field_path + "." + kv.first.as<std::string>();
        COLLIDE_RETURN_IF_ERROR(set_scalar(ctx, kv.first, item_path, *item, key_field, false));
        COLLIDE_RETURN_IF_ERROR(set_scalar(ctx, kv.second, item_path, *item, value_field, false));
      }
    } else if (f->is_repeated()) {
      if (!value.IsSequence()) return error_at(ctx, value, field_path, "expected a list");
      for (size_t i = 0; i < value.size(); ++i) {
        COLLIDE_RETURN_IF_ERROR(set_scalar(ctx, value[i], fmt::format("{}[{}]", field_path, i),
                                           msg, f, true));
      }
    } else {
      COLLIDE_RETURN_IF_ERROR(set_scalar(ctx, value, field_path, msg, f, false));
    }
  }
  return {};
}

Status set_scalar(const Context& ctx, const YAML::Node& node, const std::string& path,
                  Message& msg, const FieldDescriptor* f, bool add) {
  const Reflection* refl = msg.GetReflection();
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    Message* sub = add ? refl->AddMessage(&msg, f) : refl->MutableMessage(&msg, f);
    return fill_message(ctx, node, path, *sub);
  }
  if (!node.IsScalar()) return error_at(ctx, node, path, "expected a single value");
  const std::string text = node.Scalar();
  auto number = [&](double lo, double hi, bool integral) -> Result<double> {
    const auto parsed = units::split_number(text);
    double value = parsed ? parsed->value : 0;
    const std::string unit = parsed ? parsed->unit : "";
    if (!parsed) {
      return error_at(ctx, node, path, fmt::format("'{}' is not a number", text));
    }
    auto scale = unit_scale(f->name(), unit);
    if (!scale) return error_at(ctx, node, path, fmt::format("unit '{}' does not fit this field", unit));
    value *= *scale;
    if (integral && std::abs(value - std::round(value)) > 1e-9 * std::max(1.0, std::abs(value))) {
      return error_at(ctx, node, path, fmt::format("'{}' is not a whole number", text));
    }
    if (value < lo || value > hi) {
      return error_at(ctx, node, path, fmt::format("{} is out of range", text));
    }
    return integral ? std::round(value) : value;
  };
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      const bool is_signed = f->cpp_type() == FieldDescriptor::CPPTYPE_INT32 ||
                             f->cpp_type() == FieldDescriptor::CPPTYPE_INT64;
      const bool is32 = f->cpp_type() == FieldDescriptor::CPPTYPE_INT32 ||
                        f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32;
      const double hi = is32 ? (is_signed ? 2147483647.0 : 4294967295.0) : 9.007199254740992e15;
      auto v = number(is_signed ? -hi : 0, hi, true);
      if (!v.ok()) return v.status();
      const auto whole = static_cast<int64_t>(*v);
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32:
          add ? refl->AddInt32(&msg, f, static_cast<int32_t>(whole))
              : refl->SetInt32(&msg, f, static_cast<int32_t>(whole));
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          add ? refl->AddInt64(&msg, f, whole) : refl->SetInt64(&msg, f, whole);
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          add ? refl->AddUInt32(&msg, f, static_cast<uint32_t>(whole))
              : refl->SetUInt32(&msg, f, static_cast<uint32_t>(whole));
          break;
        default:
          add ? refl->AddUInt64(&msg, f, static_cast<uint64_t>(whole))
              : refl->SetUInt64(&msg, f, static_cast<uint64_t>(whole));
      }
      return {};
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      auto v = number(-std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), false);
      if (!v.ok()) return v.status();
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        add ? refl->AddDouble(&msg, f, *v) : refl->SetDouble(&msg, f, *v);
      } else {
        add ? refl->AddFloat(&msg, f, static_cast<float>(*v))
            : refl->SetFloat(&msg, f, static_cast<float>(*v));
      }
      return {};
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      const std::string t = lower(text);
      bool v;
      if (t == "true" || t == "yes" || t == "on") {
        v = true;
      } else if (t == "false" || t == "no" || t == "off") {
        v = false;
      } else {
        return error_at(ctx, node, path, fmt::format("'{}' is not true or false", text));
      }
      add ? refl->AddBool(&msg, f, v) : refl->SetBool(&msg, f, v);
      return {};
    }
    case FieldDescriptor::CPPTYPE_STRING:
      add ? refl->AddString(&msg, f, text) : refl->SetString(&msg, f, text);
      return {};
    case FieldDescriptor::CPPTYPE_ENUM: {
      // "selective-repeat", "SELECTIVE_REPEAT" and "RECOVERY_SELECTIVE_REPEAT" all match.
      std::string wanted = lower(text);
      std::replace(wanted.begin(), wanted.end(), '-', '_');
      const auto* e = f->enum_type();
      std::string prefix;
      for (char c : e->name()) {
        if (std::isupper(static_cast<unsigned char>(c)) && !prefix.empty()) prefix += '_';
        prefix += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      prefix += "_";
      std::string names;
      for (int i = 0; i < e->value_count(); ++i) {
        const EnumValueDescriptor* v = e->value(i);
        std::string name = lower(v->name());
        std::string short_name = name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
        if (wanted == name || wanted == short_name) {
          add ? refl->AddEnumValue(&msg, f, v->number()) : refl->SetEnumValue(&msg, f, v->number());
          return {};
        }
        names += (i ? ", " : "") + short_name;
      }
      return error_at(ctx, node, path, fmt::format("'{}' is not one of: {}", text, names));
    }
    default:
      return error_at(ctx, node, path, "unsupported field type");
  }
}

Status parse_node(const YAML::Node& root, const Context& ctx, Message& message) {
  std::unique_ptr<Message> fresh(message.New());
  COLLIDE_RETURN_IF_ERROR(fill_message(ctx, root, "", *fresh));
  message.GetReflection()->Swap(&message, fresh.get());
  return {};
}

}  // namespace

Status parse_yaml_string(const std::string& text, const std::string& source_name,
                         google::protobuf::Message& message, FieldLines* lines) {
  const Context ctx{source_name, lines};
  try {
    return parse_node(YAML::Load(text), ctx, message);
  } catch (const YAML::Exception& e) {
    return invalid_argument(fmt::format("{}:{}: not valid YAML: {}", source_name, e.mark.line + 1,
                                        e.msg));
  }
}

Status parse_yaml_node(const YAML::Node& root, const std::string& source_name,
                       google::protobuf::Message& message, FieldLines* lines) {
  const Context ctx{source_name, lines};
  try {
    return parse_node(root, ctx, message);
  } catch (const YAML::Exception& e) {
    return invalid_argument(fmt::format("{}:{}: not valid YAML: {}", source_name, e.mark.line + 1, e.msg));
  }
}

Result<YAML::Node> read_yaml_file(const std::string& path) {
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return not_found(fmt::format("{}: cannot read the file", path));
  } catch (const YAML::Exception& e) {
    return invalid_argument(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
}

Status parse_yaml_file(const std::string& path, google::protobuf::Message& message,
                       FieldLines* lines) {
  auto document = read_yaml_file(path);
  if (!document.ok()) return document.status();
  return parse_yaml_node(*document, path, message, lines);
}

}  // namespace collide::config
