#include "orchestrator/testbed/link_names.h"

#include <regex>

#include <fmt/format.h>

#include "common/parse_number.h"

namespace collide::orchestrator::testbed {

Result<std::optional<HostLinkName>> parse_host_link(const std::string& link) {
  static const std::regex kHost(R"(h(\d+)(?:\.(nic|eth)(\d+))?)");
  std::smatch m;
  if (!std::regex_match(link, m, kHost)) return std::optional<HostLinkName>();
  HostLinkName name;
  auto host = parse_number<uint32_t>(m.str(1), fmt::format("link '{}': host", link));
  if (!host.ok()) return host.status();
  name.host = *host;
  if (m[3].matched) {
    auto nic = parse_number<uint32_t>(m.str(3), fmt::format("link '{}': NIC", link));
    if (!nic.ok()) return nic.status();
    name.nic = *nic;
    name.nic_named = true;
  }
  return std::optional<HostLinkName>(name);
}

Status check_host_link(const std::string& link, const HostLinkName& name, uint32_t hosts,
                       uint32_t nics_per_host) {
  if (name.host >= hosts) {
    return not_found(fmt::format("no link '{}': the testbed's hosts are h0..h{}", link,
                                 static_cast<int64_t>(hosts) - 1));
  }
  if (name.nic >= nics_per_host) {
    return not_found(fmt::format("no link '{}': host {}'s NICs are nic0..nic{}", link, name.host,
                                 static_cast<int64_t>(nics_per_host) - 1));
  }
  return {};
}

std::string host_nic_name(uint32_t host, uint32_t nic) { return fmt::format("h{}.nic{}", host, nic); }

}  // namespace collide::orchestrator::testbed
