// A `collide` built without eBPF or DPDK: the commands that need them fail, say so, and name the
// build option, instead of failing to link or failing obscurely.
#include <gtest/gtest.h>

#include "common/process.h"

namespace collide {
namespace {

TEST(BuildOptionsCliTest, InjectWithoutEbpfSaysTheBuildLacksIt) {
#ifdef COLLIDE_HAVE_EBPF
  GTEST_SKIP() << "this build has eBPF";
#endif
  // The loopback device exists everywhere; the injector is refused before anything is attached.
  auto out = process::run_command({COLLIDE_BIN, "inject", "--dev", "lo", "--loss", "1%",
                                   "--duration", "1s"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 1) << out->output;
  EXPECT_NE(out->output.find("without eBPF (-DCOLLIDE_WITH_EBPF=OFF)"), std::string::npos)
      << out->output;
}

}  // namespace
}  // namespace collide
