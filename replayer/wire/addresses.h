#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace collide::replayer::wire {

struct MacAddress {
  std::array<uint8_t, 6> bytes{};

  // "aa:bb:cc:dd:ee:ff" (case-insensitive).
  static Result<MacAddress> parse(std::string_view text);
  std::string to_string() const;
  bool operator==(const MacAddress&) const = default;
};

struct Ipv4Address {
  uint32_t host_order = 0;

  // Dotted quad "198.18.0.1".
  static Result<Ipv4Address> parse(std::string_view text);
  std::string to_string() const;
  bool operator==(const Ipv4Address&) const = default;
};

}  // namespace collide::replayer::wire
