#include "common/parse_number.h"

#include <fmt/format.h>

namespace collide::parse_number_detail {

Status not_a_number(std::string_view what, std::string_view text, std::string_view kind) {
  return invalid_argument(fmt::format("{}: '{}' is not a {}", what, text, kind));
}

Status out_of_range(std::string_view what, std::string_view text, std::string_view lowest,
                    std::string_view highest) {
  if (lowest.empty()) return invalid_argument(fmt::format("{}: {} is out of range", what, text));
  return invalid_argument(
      fmt::format("{}: {} is out of range ({} to {})", what, text, lowest, highest));
}

}  // namespace collide::parse_number_detail
