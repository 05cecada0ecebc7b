// A build without eBPF: the fault injector refuses to load and says why.
#include <gtest/gtest.h>

#include "injectors/fault_injector.h"

namespace collide::injectors {
namespace {

TEST(WithoutEbpfTest, LoadingTheInjectorSaysTheBuildLacksEbpf) {
  auto injector = FaultInjector::load({});
  ASSERT_FALSE(injector.ok());
  EXPECT_EQ(injector.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(injector.status().message().find("without eBPF (-DCOLLIDE_WITH_EBPF=OFF)"),
            std::string::npos)
      << injector.status().message();
}

TEST(WithoutEbpfTest, AttachingATcProgramSaysTheBuildLacksEbpf) {
  auto link = TcLink::attach(3, 1, Direction::kIngress);
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.status().message().find("-DCOLLIDE_WITH_EBPF=OFF"), std::string::npos);
}

TEST(WithoutEbpfTest, TheClockStillReads) {
  const uint64_t a = FaultInjector::monotonic_ns();
  EXPECT_GT(a, 0u);
  EXPECT_GE(FaultInjector::monotonic_ns(), a);
  EXPECT_STREQ(direction_name(Direction::kEgress), "egress");
}

}  // namespace
}  // namespace collide::injectors
