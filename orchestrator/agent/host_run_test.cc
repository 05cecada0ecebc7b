#include "orchestrator/agent/host_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/all_reduce_trace.h"

namespace collide::orchestrator::agent {
namespace {

#ifdef COLLIDE_HAVE_DPDK
// The EAL arguments an agent is configured with (`collide agent --eal-arg`) reach the EAL of every
// replay it starts: one the EAL does not know makes the run fail to start, and says so.
TEST(HostRunTest, TheAgentsEalArgsReachTheReplaysEal) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("collide-host-run-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace_file = (dir / "job.trace").string();
  testing::write_all_reduce_trace(trace_file, 2, 4096, /*declare_comm=*/true);
  std::ifstream in(trace_file, std::ios::binary);
  v1::PrepareRun request;
  request.set_trace(std::string(std::istreambuf_iterator<char>(in), {}));
  request.add_ranks(0);
  request.set_ranks_per_host(1);
  request.add_nics()->set_next_hop_mac("02:00:00:00:00:01");

  HostRunDefaults defaults;
  defaults.port_spec = "dpdk:net_null0";
  defaults.work_dir = dir / "work";
  defaults.collide_binary = COLLIDE_BIN;
  defaults.eal_args = {"--no-such-eal-option"};
  auto run = HostRun::prepare(request, defaults);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(run.ok()) << "a replay whose EAL was given an unknown option started";
  const std::string why = run.status().message();
  EXPECT_NE(why.find("rte_eal_init"), std::string::npos) << why;
  EXPECT_NE(why.find("--no-such-eal-option"), std::string::npos) << why;
}
#endif

}  // namespace
}  // namespace collide::orchestrator::agent
