#include "traces/chakra/node_attrs.h"

namespace collide::traces::chakra {

using ChakraProtoMsg::AttributeProto;

const AttributeProto* find_attr(const ChakraProtoMsg::Node& node, std::string_view name) {
  for (const AttributeProto& attr : node.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::optional<int64_t> int_attr(const ChakraProtoMsg::Node& node, std::string_view name, bool& ok) {
  const AttributeProto* attr = find_attr(node, name);
  if (attr == nullptr) return std::nullopt;
  switch (attr->value_case()) {
    case AttributeProto::kInt32Val:
      return attr->int32_val();
    case AttributeProto::kInt64Val:
      return attr->int64_val();
    case AttributeProto::kUint32Val:
      return attr->uint32_val();
    case AttributeProto::kUint64Val:
      if (attr->uint64_val() > static_cast<uint64_t>(INT64_MAX)) break;
      return static_cast<int64_t>(attr->uint64_val());
    case AttributeProto::kSint32Val:
      return attr->sint32_val();
    case AttributeProto::kSint64Val:
      return attr->sint64_val();
    case AttributeProto::kFixed32Val:
      return attr->fixed32_val();
    case AttributeProto::kFixed64Val:
      if (attr->fixed64_val() > static_cast<uint64_t>(INT64_MAX)) break;
      return static_cast<int64_t>(attr->fixed64_val());
    case AttributeProto::kSfixed32Val:
      return attr->sfixed32_val();
    case AttributeProto::kSfixed64Val:
      return attr->sfixed64_val();
    default:
      break;
  }
  ok = false;
  return std::nullopt;
}

std::optional<std::string> string_attr(const ChakraProtoMsg::Node& node, std::string_view name) {
  const AttributeProto* attr = find_attr(node, name);
  if (attr == nullptr || attr->value_case() != AttributeProto::kStringVal) return std::nullopt;
  return attr->string_val();
}

std::optional<bool> bool_attr(const ChakraProtoMsg::Node& node, std::string_view name) {
  const AttributeProto* attr = find_attr(node, name);
  if (attr == nullptr || attr->value_case() != AttributeProto::kBoolVal) return std::nullopt;
  return attr->bool_val();
}

bool flag_attr(const ChakraProtoMsg::Node& node, std::string_view name) {
  if (auto b = bool_attr(node, name)) return *b;
  bool ok = true;
  const auto v = int_attr(node, name, ok);
  return ok && v && *v != 0;
}

bool is_host_side_comm(const ChakraProtoMsg::Node& node) {
  if (node.type() != ChakraProtoMsg::COMM_COLL_NODE || find_attr(node, "comm_type") != nullptr) {
    return false;
  }
  const std::string& n = node.name();
  return flag_attr(node, "is_cpu_op") || n.starts_with("c10d::") || n.starts_with("nccl:") ||
         n.find("record_param_comms") != std::string::npos;
}

void add_int64_attr(ChakraProtoMsg::Node& node, std::string name, int64_t value) {
  AttributeProto* attr = node.add_attr();
  attr->set_name(std::move(name));
  attr->set_int64_val(value);
}

void add_int32_attr(ChakraProtoMsg::Node& node, std::string name, int32_t value) {
  AttributeProto* attr = node.add_attr();
  attr->set_name(std::move(name));
  attr->set_int32_val(value);
}

void add_string_attr(ChakraProtoMsg::Node& node, std::string name, std::string value) {
  AttributeProto* attr = node.add_attr();
  attr->set_name(std::move(name));
  attr->set_string_val(std::move(value));
}

}  // namespace collide::traces::chakra
