#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collide/trace.pb.h"
#include "common/result.h"

// Names, sizes and NCCL ids of the trace model's enums.
namespace collide::traces {

// Bytes per element; 0 for DATA_TYPE_UNSPECIFIED.
uint32_t datatype_size(v1::DataType type);

// NCCL's ncclDataType_t id (0 = int8 ... 11 = fp8e5m2).
Result<v1::DataType> datatype_from_nccl_id(int id);
// NCCL's ncclRedOp_t id; ids from 5 on are user-defined ops and map to REDUCE_OP_USER.
Result<v1::ReduceOp> reduce_op_from_nccl_id(int id);

// Short names as people write them: "all_reduce", "bfloat16", "sum".
std::string_view op_kind_name(v1::OpKind kind);
std::string_view datatype_name(v1::DataType type);
std::string_view reduce_op_name(v1::ReduceOp op);
Result<v1::OpKind> parse_op_kind(std::string_view name);
Result<v1::DataType> parse_datatype(std::string_view name);

// Whether the kind is a point-to-point op (send, recv) rather than a collective.
bool is_point_to_point(v1::OpKind kind);

// Where an op came from, for messages: "file:line" when it names a line of one of the header's
// source files, else its `source` text (empty when neither is set).
std::string op_source(const v1::TraceHeader& header, const v1::Op& op);

}  // namespace collide::traces
