#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "chakra/et_def.pb.h"

// Typed access to a Chakra node's attributes by name. Producers disagree on integer widths
// (int32 vs int64 vs uint64), so integers are accepted from any integer field of the oneof.
namespace collide::traces::chakra {

const ChakraProtoMsg::AttributeProto* find_attr(const ChakraProtoMsg::Node& node,
                                                std::string_view name);
// The attribute as an integer; nullopt when absent. `ok` is set false when it is present but is
// not an integer.
std::optional<int64_t> int_attr(const ChakraProtoMsg::Node& node, std::string_view name, bool& ok);
std::optional<std::string> string_attr(const ChakraProtoMsg::Node& node, std::string_view name);
std::optional<bool> bool_attr(const ChakraProtoMsg::Node& node, std::string_view name);
// A flag written as a bool or, by Chakra's converters before late 2024 (is_cpu_op), as an int32:
// true when present and true or non-zero.
bool flag_attr(const ChakraProtoMsg::Node& node, std::string_view name);

// A communication node that stands for the host side of a collective, not the collective: the
// CPU operators PyTorch records (c10d::allreduce_, record_param_comms, nccl:all_reduce), which
// Chakra's converters give COMM_COLL_NODE type without comm_type or comm_size. The GPU kernel node
// beside each carries the collective.
bool is_host_side_comm(const ChakraProtoMsg::Node& node);

void add_int64_attr(ChakraProtoMsg::Node& node, std::string name, int64_t value);
void add_int32_attr(ChakraProtoMsg::Node& node, std::string name, int32_t value);
void add_string_attr(ChakraProtoMsg::Node& node, std::string name, std::string value);

}  // namespace collide::traces::chakra
