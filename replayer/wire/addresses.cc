#include "replayer/wire/addresses.h"

#include <arpa/inet.h>

#include <charconv>

#include <fmt/format.h>

namespace collide::replayer::wire {

Result<MacAddress> MacAddress::parse(std::string_view text) {
  MacAddress mac;
  size_t pos = 0;
  for (size_t i = 0; i < mac.bytes.size(); ++i) {
    if (i > 0) {
      if (pos >= text.size() || text[pos] != ':') break;
      ++pos;
    }
    if (pos + 2 > text.size()) break;
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data() + pos, text.data() + pos + 2, value, 16);
    if (ec != std::errc() || end != text.data() + pos + 2) break;
    mac.bytes[i] = static_cast<uint8_t>(value);
    pos += 2;
    if (i == mac.bytes.size() - 1 && pos == text.size()) return mac;
  }
  return invalid_argument(fmt::format("'{}' is not a MAC address (want aa:bb:cc:dd:ee:ff)", text));
}

std::string MacAddress::to_string() const {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", bytes[0], bytes[1], bytes[2],
                     bytes[3], bytes[4], bytes[5]);
}

Result<Ipv4Address> Ipv4Address::parse(std::string_view text) {
  in_addr addr{};
  const std::string copy(text);
  if (inet_pton(AF_INET, copy.c_str(), &addr) != 1) {
    return invalid_argument(fmt::format("'{}' is not an IPv4 address", text));
  }
  return Ipv4Address{ntohl(addr.s_addr)};
}

std::string Ipv4Address::to_string() const {
  return fmt::format("{}.{}.{}.{}", host_order >> 24, (host_order >> 16) & 0xff,
                     (host_order >> 8) & 0xff, host_order & 0xff);
}

}  // namespace collide::replayer::wire
