#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

// The units people write in configs (YAML) and on the command line, in one table, so that "1KB"
// means the same wherever it is typed.
//
// Sizes: KB, MB, GB, TB are SI (1000^n bytes) and KiB, MiB, GiB, TiB are IEC (1024^n bytes).
// SI because every figure collide prints is SI (GB/s in the nccl-tests table is 1e9 bytes per
// second, as nccl-tests prints it): a size typed as "1MB" then reads back as 1 MB. Whoever means a
// power of two writes KiB, which cannot be misread. The bare suffixes k, m, g are tc's notation for
// sizes (tc-bfifo, tc-tbf), powers of 1024, kept so that a tc burst can be pasted as it is.
// Durations: ns, us, ms, s, m or min, h. Rates: bit, kbit, mbit, gbit, tbit (bits per second, SI).
// Units are matched without regard to case.
namespace collide::units {

// Bytes per unit; nullopt for a unit that is not a size. "" and "b" are bytes.
std::optional<double> bytes_per_unit(std::string_view unit);
// Nanoseconds per unit; nullopt for a unit that is not a duration.
std::optional<double> ns_per_unit(std::string_view unit);
// Bits per second per unit; nullopt for a unit that is not a rate.
std::optional<double> bits_per_s_per_unit(std::string_view unit);

// "1.5GB" -> (1.5, "gb"): the number and its unit, lower case, spaces dropped; nullopt when the
// text does not start with a number.
struct NumberWithUnit {
  double value = 0;
  std::string unit;
};
std::optional<NumberWithUnit> split_number(std::string_view text);

// "4KiB", "1MB", "1500": a whole number of bytes (a bare number is bytes). The error quotes the text.
Result<uint64_t> parse_bytes(std::string_view text);
// "10ms", "1.5s", "40us": a duration (a bare number is seconds).
Result<std::chrono::nanoseconds> parse_duration(std::string_view text);
// The duration in the largest unit that holds it whole ("8h", "90m", "1500ms", "0s"), so that it
// reads back as the same duration.
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace collide::units
