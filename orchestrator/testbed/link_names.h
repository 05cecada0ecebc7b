#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"

// How scenarios and reports name the links of a testbed, in one place: a host's link by its NIC
// ("h1.nic3"; "h1.eth3" names the same link by the host's interface; "h1" is NIC 0, the only one
// of a host with one NIC) and a fabric link by its two switches ("leaf0-spine1").
namespace collide::orchestrator::testbed {

struct HostLinkName {
  uint32_t host = 0;
  uint32_t nic = 0;
  bool nic_named = false;  // "h1.nic0" rather than "h1"
};

// "h1", "h1.nic3" or "h1.eth3": the host and NIC; another kind of name (a fabric link): nullopt.
// A host link name whose numbers do not read is an error naming the link.
Result<std::optional<HostLinkName>> parse_host_link(const std::string& link);

// A host link named by one of `nics_per_host` NICs of one of `hosts` hosts, or an error that says
// which hosts and NICs there are.
Status check_host_link(const std::string& link, const HostLinkName& name, uint32_t hosts,
                       uint32_t nics_per_host);

// "h1.nic2": how reports name the host end of NIC 2 of host 1.
std::string host_nic_name(uint32_t host, uint32_t nic);

}  // namespace collide::orchestrator::testbed
