// A build without eBPF: a lossless switch cannot count its ingress ports, and says why.
#include <gtest/gtest.h>

#include "orchestrator/testbed/port_feeds.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::testbed {
namespace {

TEST(PortFeedsWithoutEbpfTest, AttachingSaysLosslessModeNeedsEbpf) {
  EXPECT_THAT(PortFeeds::attach({2, 3}, {}),
              StatusIs(StatusCode::kFailedPrecondition,
                       ::testing::AllOf(::testing::HasSubstr("lossless mode (PFC) needs eBPF"),
                                        ::testing::HasSubstr("-DCOLLIDE_WITH_EBPF=OFF"))));
}

}  // namespace
}  // namespace collide::orchestrator::testbed
