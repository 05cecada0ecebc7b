#pragma once

#include <optional>
#include <string_view>

#include "collide/trace.pb.h"

// PyTorch's names for element types and collectives, as its Flight Recorder and profiler print
// them, mapped onto the trace model.
namespace collide::traces::flight_recorder {

// c10::ScalarType's name ("Float", "BFloat16", "Long", "Float8_e4m3fn") as NCCL carries it;
// nullopt for types NCCL has no type for (complex, quantized, Short).
std::optional<v1::DataType> datatype_from_torch(std::string_view name);

// A collective's name in any of PyTorch's spellings ("all_reduce", "allreduce",
// "_allgather_base", "all_gather_into_tensor_coalesced", "_reduce_scatter_base",
// "all_to_all_single", "alltoall_base", "send", "recv", ...); nullopt when it is none of them.
std::optional<v1::OpKind> op_kind_from_torch(std::string_view name);

}  // namespace collide::traces::flight_recorder
