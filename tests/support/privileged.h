#pragma once

#include <string>

#include <gtest/gtest.h>

// Tests that need root, namespaces, BPF or DPDK call COLLIDE_REQUIRE(missing_...()) first. Where the
// capability is missing they skip, unless COLLIDE_REQUIRE_PRIVILEGED=1 (set in CI), where they fail:
// a privileged test that silently skipped in CI would prove nothing.
namespace collide::testing {

bool privileged_required();

// Each returns an empty string when the capability is present, else why it is not.
std::string missing_root();
std::string missing_netns();  // root, iproute2 and `ip netns` working
std::string missing_bpf();    // tc BPF programs loadable
std::string missing_tool(const std::string& program);

}  // namespace collide::testing

#define COLLIDE_REQUIRE(missing_expr)                                                          \
  do {                                                                                         \
    const std::string collide_missing_ = (missing_expr);                                       \
    if (!collide_missing_.empty()) {                                                           \
      if (::collide::testing::privileged_required()) {                                         \
        FAIL() << "COLLIDE_REQUIRE_PRIVILEGED=1 but " << collide_missing_;                     \
      }                                                                                        \
      GTEST_SKIP() << collide_missing_;                                                        \
    }                                                                                          \
  } while (0)
