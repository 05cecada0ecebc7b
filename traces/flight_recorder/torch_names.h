#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

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

// The op's count with NCCL's meaning (what the trace model's Op.count holds) from the elements of
// all input and all output tensors PyTorch records: all-gather and gather count what each rank
// sends (the input), reduce-scatter and scatter what each receives (the output), all-to-all what
// goes to each of the group's `group_size` ranks, recv its output when no input is recorded,
// barrier nothing, the others their input.
uint64_t nccl_count(v1::OpKind kind, uint64_t input_numel, uint64_t output_numel,
                    uint64_t group_size);

// A list of ranks as PyTorch prints one: "[0, 1, 2]" (also without brackets); nullopt when the
// text holds anything but ranks.
std::optional<std::vector<uint32_t>> parse_torch_rank_list(std::string_view text);

}  // namespace collide::traces::flight_recorder
