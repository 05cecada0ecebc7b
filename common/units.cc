#include "common/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace collide::units {
namespace {

template <size_t N>
std::optional<double> look_up(const std::pair<std::string_view, double> (&table)[N], std::string_view unit) {
  std::string u(unit);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& [name, scale] : table) {
    if (u == name) return scale;
  }
  return std::nullopt;
}

constexpr double kKi = 1024.0;

}  // namespace

std::optional<double> bytes_per_unit(std::string_view unit) {
  static const std::pair<std::string_view, double> kSizes[] = {
      {"", 1},          {"b", 1},
      {"kb", 1e3},      {"mb", 1e6},            {"gb", 1e9},                  {"tb", 1e12},
      {"kib", kKi},     {"mib", kKi * kKi},     {"gib", kKi * kKi * kKi},     {"tib", kKi * kKi * kKi * kKi},
      {"k", kKi},       {"m", kKi * kKi},       {"g", kKi * kKi * kKi}};
  return look_up(kSizes, unit);
}

std::optional<double> ns_per_unit(std::string_view unit) {
  static const std::pair<std::string_view, double> kTimes[] = {
      {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}};
  return look_up(kTimes, unit);
}

std::optional<double> bits_per_s_per_unit(std::string_view unit) {
  static const std::pair<std::string_view, double> kRates[] = {
      {"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12}};
  return look_up(kRates, unit);
}

std::optional<NumberWithUnit> split_number(std::string_view text) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(*begin))) ++begin;
  NumberWithUnit n;
  auto [ptr, ec] = std::from_chars(begin, end, n.value);
  if (ec != std::errc()) return std::nullopt;
  for (; ptr < end; ++ptr) {
    if (!std::isspace(static_cast<unsigned char>(*ptr))) {
      n.unit.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(*ptr))));
    }
  }
  return n;
}

Result<uint64_t> parse_bytes(std::string_view text) {
  const auto n = split_number(text);
  if (!n) return invalid_argument(fmt::format("size '{}' is not a number with a unit", text));
  const auto scale = bytes_per_unit(n->unit);
  if (!scale) {
    return invalid_argument(fmt::format(
        "size '{}' has an unknown unit '{}' (B, KB/MB/GB/TB = 1000^n, KiB/MiB/GiB/TiB = 1024^n)", text,
        n->unit));
  }
  const double bytes = n->value * *scale;
  if (!(bytes >= 0) || bytes > 1.8e19 || bytes != std::floor(bytes)) {
    return invalid_argument(fmt::format("size '{}' is not a whole number of bytes in range", text));
  }
  return static_cast<uint64_t>(bytes);
}

Result<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  const auto n = split_number(text);
  if (!n) return invalid_argument(fmt::format("duration '{}' is not a number with a unit", text));
  const auto scale = n->unit.empty() ? std::optional<double>(1e9) : ns_per_unit(n->unit);
  if (!scale) {
    return invalid_argument(fmt::format("duration '{}' has an unknown unit '{}' (ns, us, ms, s, m, h)",
                                        text, n->unit));
  }
  const double ns = n->value * *scale;
  if (!(ns >= 0) || ns > 9e18) return invalid_argument(fmt::format("duration '{}' is negative or too long", text));
  return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(ns)));
}

std::string format_duration(std::chrono::nanoseconds d) {
  static const std::pair<std::string_view, int64_t> kUnits[] = {
      {"h", 3'600'000'000'000}, {"m", 60'000'000'000}, {"s", 1'000'000'000}, {"ms", 1'000'000}, {"us", 1'000}};
  const int64_t ns = d.count();
  for (const auto& [unit, size] : kUnits) {
    if (ns != 0 && ns % size == 0) return fmt::format("{}{}", ns / size, unit);
  }
  return ns == 0 ? "0s" : fmt::format("{}ns", ns);
}

}  // namespace collide::units
