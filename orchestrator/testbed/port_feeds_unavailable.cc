// PortFeeds in a build without eBPF: lossless (PFC) switches cannot account for their ingress
// ports, so they cannot be built.
#include "orchestrator/testbed/port_feeds.h"

namespace collide::orchestrator::testbed {

struct PortFeeds::Loaded {};

Result<std::unique_ptr<PortFeeds>> PortFeeds::attach(const std::vector<int>& /*egress_ifindexes*/,
                                                     TosMatch /*lossless*/) {
  return failed_precondition(
      "lossless mode (PFC) needs eBPF to count which ports feed each switch queue, and this build "
      "is without it (-DCOLLIDE_WITH_EBPF=OFF)");
}

PortFeeds::~PortFeeds() = default;

// Never attached, so nothing is ever mapped: every pair reads 0.
uint64_t PortFeeds::read(int, int, int) const { return counts_ == nullptr ? 0 : *counts_; }

}  // namespace collide::orchestrator::testbed
