#pragma once

#include <cstdint>
#include <string>

#include "collide/testbed.pb.h"

namespace collide::testing {

// A virtual leaf-spine testbed of `hosts` single-NIC hosts (host h under leaf h % leaves), as unit
// tests of the testbed's plan start from; each test sets what else it needs.
inline v1::VirtualTestbedSpec leaf_spine_spec(const std::string& name, uint32_t hosts, uint32_t leaves,
                                              uint32_t spines) {
  v1::VirtualTestbedSpec s;
  s.set_name(name);
  s.set_hosts(hosts);
  s.set_nics_per_host(1);
  s.set_leaves(leaves);
  s.set_spines(spines);
  return s;
}

}  // namespace collide::testing
