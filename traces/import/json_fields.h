#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/result.h"

// Numbers in the JSON formats collide imports, checked the same way everywhere.
namespace collide::traces {

// `value` as an unsigned integer; otherwise an error saying why ("negative", "expected an
// integer, got string") that the caller prefixes with the file and field.
inline Result<uint64_t> json_uint(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer()) {
    const auto signed_value = value.get<int64_t>();
    if (signed_value < 0) return invalid_argument("negative");
    return static_cast<uint64_t>(signed_value);
  }
  return invalid_argument(std::string("expected an integer, got ") + value.type_name());
}

}  // namespace collide::traces
