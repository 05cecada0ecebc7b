#pragma once

#include <charconv>
#include <cmath>
#include <concepts>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "common/result.h"

namespace collide {

namespace parse_number_detail {
// Error messages, out of line so the template stays small. `what` names the field or file:line.
Status not_a_number(std::string_view what, std::string_view text, std::string_view kind);
Status out_of_range(std::string_view what, std::string_view text, std::string_view lowest,
                    std::string_view highest);
}  // namespace parse_number_detail

// Reads all of `text` as a number of type T: an integer in `base` (2 to 36; 16 reads "1f" and
// "0x1f", as /proc files print both), or a finite floating-point number (decimal or exponent form; `base` is ignored). No
// sign on unsigned types, no surrounding spaces, nothing left over, and the value must fit T. The
// error names `what` (a field, an option, a file:line) and the text, e.g.
//   "--listen port: '80a' is not a whole number".
template <typename T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
Result<T> parse_number(std::string_view text, std::string_view what, int base = 10) {
  T value{};
  std::string_view digits = text;
  if (base == 16 && (digits.starts_with("0x") || digits.starts_with("0X"))) digits.remove_prefix(2);
  const char* const first = digits.data();
  const char* const last = digits.data() + digits.size();
  std::from_chars_result r;
  if constexpr (std::is_floating_point_v<T>) {
    r = std::from_chars(first, last, value);
  } else {
    r = std::from_chars(first, last, value, base);
  }
  if (r.ec == std::errc::result_out_of_range) {
    if constexpr (std::is_floating_point_v<T>) {
      return parse_number_detail::out_of_range(what, text, "", "");
    } else {
      return parse_number_detail::out_of_range(
          what, text, std::to_string(std::numeric_limits<T>::min()),
          std::to_string(std::numeric_limits<T>::max()));
    }
  }
  const std::string_view kind = std::is_floating_point_v<T> ? "number"
                                : base == 16                ? "hexadecimal number"
                                : std::is_signed_v<T>       ? "whole number"
                                                            : "non-negative whole number";
  if (r.ec != std::errc() || r.ptr != last) {
    return parse_number_detail::not_a_number(what, text, kind);
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) return parse_number_detail::not_a_number(what, text, "finite number");
  }
  return value;
}

}  // namespace collide
