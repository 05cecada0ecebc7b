#include "traces/op_types.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace collide::traces {
namespace {

constexpr std::array<std::pair<v1::OpKind, std::string_view>, 12> kOpKindNames = {{
    {v1::OP_KIND_ALL_REDUCE, "all_reduce"},
    {v1::OP_KIND_ALL_GATHER, "all_gather"},
    {v1::OP_KIND_REDUCE_SCATTER, "reduce_scatter"},
    {v1::OP_KIND_ALL_TO_ALL, "all_to_all"},
    {v1::OP_KIND_ALL_TO_ALLV, "all_to_allv"},
    {v1::OP_KIND_BROADCAST, "broadcast"},
    {v1::OP_KIND_REDUCE, "reduce"},
    {v1::OP_KIND_GATHER, "gather"},
    {v1::OP_KIND_SCATTER, "scatter"},
    {v1::OP_KIND_SEND, "send"},
    {v1::OP_KIND_RECV, "recv"},
    {v1::OP_KIND_BARRIER, "barrier"},
}};

struct DataTypeInfo {
  v1::DataType type;
  std::string_view name;
  uint32_t size;
};

constexpr std::array<DataTypeInfo, 12> kDataTypes = {{
    {v1::DATA_TYPE_INT8, "int8", 1},
    {v1::DATA_TYPE_UINT8, "uint8", 1},
    {v1::DATA_TYPE_INT32, "int32", 4},
    {v1::DATA_TYPE_UINT32, "uint32", 4},
    {v1::DATA_TYPE_INT64, "int64", 8},
    {v1::DATA_TYPE_UINT64, "uint64", 8},
    {v1::DATA_TYPE_FLOAT16, "float16", 2},
    {v1::DATA_TYPE_FLOAT32, "float32", 4},
    {v1::DATA_TYPE_FLOAT64, "float64", 8},
    {v1::DATA_TYPE_BFLOAT16, "bfloat16", 2},
    {v1::DATA_TYPE_FP8_E4M3, "fp8_e4m3", 1},
    {v1::DATA_TYPE_FP8_E5M2, "fp8_e5m2", 1},
}};

}  // namespace

uint32_t datatype_size(v1::DataType type) {
  for (const auto& info : kDataTypes) {
    if (info.type == type) return info.size;
  }
  return 0;
}

Result<v1::DataType> datatype_from_nccl_id(int id) {
  if (id < 0 || id >= static_cast<int>(kDataTypes.size())) {
    return invalid_argument(fmt::format("unknown NCCL datatype id {}", id));
  }
  return static_cast<v1::DataType>(id + 1);
}

Result<v1::ReduceOp> reduce_op_from_nccl_id(int id) {
  if (id < 0) return invalid_argument(fmt::format("unknown NCCL reduction op {}", id));
  if (id >= 5) return v1::REDUCE_OP_USER;
  return static_cast<v1::ReduceOp>(id + 1);
}

std::string_view op_kind_name(v1::OpKind kind) {
  for (const auto& [k, name] : kOpKindNames) {
    if (k == kind) return name;
  }
  return "unspecified";
}

std::string_view datatype_name(v1::DataType type) {
  for (const auto& info : kDataTypes) {
    if (info.type == type) return info.name;
  }
  return "unspecified";
}

std::string_view reduce_op_name(v1::ReduceOp op) {
  switch (op) {
    case v1::REDUCE_OP_SUM:
      return "sum";
    case v1::REDUCE_OP_PROD:
      return "prod";
    case v1::REDUCE_OP_MAX:
      return "max";
    case v1::REDUCE_OP_MIN:
      return "min";
    case v1::REDUCE_OP_AVG:
      return "avg";
    case v1::REDUCE_OP_USER:
      return "user";
    default:
      return "none";
  }
}

Result<v1::OpKind> parse_op_kind(std::string_view name) {
  for (const auto& [k, n] : kOpKindNames) {
    if (n == name) return k;
  }
  return invalid_argument(fmt::format("unknown operation '{}'", name));
}

Result<v1::DataType> parse_datatype(std::string_view name) {
  for (const auto& info : kDataTypes) {
    if (info.name == name) return info.type;
  }
  return invalid_argument(fmt::format("unknown datatype '{}'", name));
}

bool is_point_to_point(v1::OpKind kind) {
  return kind == v1::OP_KIND_SEND || kind == v1::OP_KIND_RECV;
}

std::string op_source(const v1::TraceHeader& header, const v1::Op& op) {
  if (op.source_line() == 0) return op.source();
  const bool named = op.source_file() < static_cast<uint32_t>(header.source_files_size());
  std::string out = named ? header.source_files(static_cast<int>(op.source_file()))
                          : "source file " + std::to_string(op.source_file());
  return out + ":" + std::to_string(op.source_line());
}

}  // namespace collide::traces
