#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "tests/support/netns.h"

namespace collide::testing {

// Two hosts joined through a third namespace that bridges their links:
// host_a:a0 (198.18.0.1/24) <-> fabric:fa, host_b:b0 (198.18.0.2/24) <-> fabric:fb, fa and fb
// bridged in the fabric, offloads off (one skb per frame). Ready when A reaches B. Everything
// goes with the object.
struct BridgedHosts {
  std::unique_ptr<TestNetns> host_a, host_b, fabric;
  std::string mac_a, mac_b;

  // Namespaces are named after `tag` (cl-<tag>-a-<pid>, ...).
  static Result<BridgedHosts> create(std::string_view tag);
};

}  // namespace collide::testing
