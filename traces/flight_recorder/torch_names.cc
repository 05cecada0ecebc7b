#include "traces/flight_recorder/torch_names.h"

#include <array>
#include <charconv>
#include <cctype>
#include <string>
#include <utility>

namespace collide::traces::flight_recorder {

std::optional<v1::DataType> datatype_from_torch(std::string_view name) {
  // PyTorch hands bool tensors to NCCL as uint8 and has no 16-bit integer NCCL type.
  static constexpr std::array<std::pair<std::string_view, v1::DataType>, 13> kTypes = {{
      {"Char", v1::DATA_TYPE_INT8},
      {"Byte", v1::DATA_TYPE_UINT8},
      {"Bool", v1::DATA_TYPE_UINT8},
      {"Int", v1::DATA_TYPE_INT32},
      {"UInt32", v1::DATA_TYPE_UINT32},
      {"Long", v1::DATA_TYPE_INT64},
      {"UInt64", v1::DATA_TYPE_UINT64},
      {"Half", v1::DATA_TYPE_FLOAT16},
      {"Float", v1::DATA_TYPE_FLOAT32},
      {"Double", v1::DATA_TYPE_FLOAT64},
      {"BFloat16", v1::DATA_TYPE_BFLOAT16},
      {"Float8_e4m3fn", v1::DATA_TYPE_FP8_E4M3},
      {"Float8_e5m2", v1::DATA_TYPE_FP8_E5M2},
  }};
  for (const auto& [torch_name, type] : kTypes) {
    if (torch_name == name) return type;
  }
  return std::nullopt;
}

std::optional<v1::OpKind> op_kind_from_torch(std::string_view name) {
  // Spellings differ in underscores and suffixes (_base, _single, _coalesced, _oop, _v), so the
  // name is compared without underscores, by its start; longer names that share a start with a
  // shorter one come first (reducescatter before reduce).
  std::string bare;
  for (char c : name) {
    if (c != '_') bare.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  static constexpr std::array<std::pair<std::string_view, v1::OpKind>, 11> kKinds = {{
      {"allreduce", v1::OP_KIND_ALL_REDUCE},
      {"allgather", v1::OP_KIND_ALL_GATHER},
      {"reducescatter", v1::OP_KIND_REDUCE_SCATTER},
      {"alltoall", v1::OP_KIND_ALL_TO_ALL},
      {"broadcast", v1::OP_KIND_BROADCAST},
      {"barrier", v1::OP_KIND_BARRIER},
      {"reduce", v1::OP_KIND_REDUCE},
      {"gather", v1::OP_KIND_GATHER},
      {"scatter", v1::OP_KIND_SCATTER},
      {"send", v1::OP_KIND_SEND},
      {"recv", v1::OP_KIND_RECV},
  }};
  for (const auto& [prefix, kind] : kKinds) {
    if (std::string_view(bare).substr(0, prefix.size()) == prefix) return kind;
  }
  return std::nullopt;
}

uint64_t nccl_count(v1::OpKind kind, uint64_t input_numel, uint64_t output_numel,
                    uint64_t group_size) {
  switch (kind) {
    case v1::OP_KIND_REDUCE_SCATTER:
    case v1::OP_KIND_SCATTER:
      return output_numel;
    case v1::OP_KIND_ALL_TO_ALL:
      return group_size == 0 ? 0 : input_numel / group_size;
    case v1::OP_KIND_RECV:
      return input_numel == 0 ? output_numel : input_numel;
    case v1::OP_KIND_BARRIER:
      return 0;
    default:
      return input_numel;
  }
}

std::optional<std::vector<uint32_t>> parse_torch_rank_list(std::string_view text) {
  std::vector<uint32_t> ranks;
  const char* p = text.data();
  const char* end = p + text.size();
  auto skip = [&] {
    while (p < end && (*p == ' ' || *p == ',' || *p == '[' || *p == ']')) ++p;
  };
  for (skip(); p < end; skip()) {
    uint32_t rank = 0;
    const auto [next, ec] = std::from_chars(p, end, rank);
    if (ec != std::errc() || next == p) return std::nullopt;
    ranks.push_back(rank);
    p = next;
  }
  return ranks;
}

}  // namespace collide::traces::flight_recorder
