#pragma once

#include <map>
#include <string>

#include <google/protobuf/message.h>

#include "common/result.h"

namespace YAML {
class Node;
}

// Configs are YAML for people and protobuf messages for code. This maps a YAML document onto any
// message by its descriptor: mappings to messages (keys are field names), sequences to repeated
// fields, scalars to numbers, booleans, strings and enums (by value name, with or without the
// enum's prefix, any case). Sizes and durations may carry units: "4KiB", "1.5GB", "10ms", "2s".
// Every error names the file, the field path and the line, and nothing is half-filled: on error
// the message is left as it was.
namespace collide::config {

// Where each field came from: "faults[1].probability" -> line 12, so that checks made after
// parsing can still point at the line.
using FieldLines = std::map<std::string, int>;

Status parse_yaml_file(const std::string& path, google::protobuf::Message& message,
                       FieldLines* lines = nullptr);
Status parse_yaml_string(const std::string& text, const std::string& source_name,
                         google::protobuf::Message& message, FieldLines* lines = nullptr);
// The file as a YAML document; errors name the file and the line (the caller includes yaml-cpp).
Result<YAML::Node> read_yaml_file(const std::string& path);
// A document already loaded (and perhaps edited, as a sweep edits one point's values in); lines
// are the nodes' own marks.
Status parse_yaml_node(const YAML::Node& root, const std::string& source_name,
                       google::protobuf::Message& message, FieldLines* lines = nullptr);

}  // namespace collide::config
