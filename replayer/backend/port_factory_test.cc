// Port specs that cannot open say why, before touching any device.
#include "replayer/backend/port_factory.h"

#include <gtest/gtest.h>

namespace collide::replayer::backend {
namespace {

TEST(PortFactoryTest, UnknownKindNamesTheKindsThereAre) {
  auto port = open_port("ring:x", 0);
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(port.status().message().find("want dpdk:<device>"), std::string::npos)
      << port.status().message();
}

// Built with -DCOLLIDE_WITH_DPDK=OFF, a DPDK port is refused with a message naming the option.
// (With DPDK, opening one starts the EAL, which needs root: the privileged DPDK tests cover it.)
TEST(PortFactoryTest, DpdkPortWithoutDpdkSaysTheBuildLacksIt) {
  if (dpdk_available()) GTEST_SKIP() << "this build has DPDK";
  auto port = open_port("dpdk:net_null0", 0);
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("without DPDK (-DCOLLIDE_WITH_DPDK=OFF)"),
            std::string::npos)
      << port.status().message();
}

}  // namespace
}  // namespace collide::replayer::backend
