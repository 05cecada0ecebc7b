// DPDK's AF_XDP driver attaches an XDP program (libxdp's) to its interface, and the kernel keeps
// it there after the process is SIGKILLed. collide records what it attached, so that the sweep
// reports and removes it.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/all_reduce_trace.h"
#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// The id of the XDP program attached to a device, 0 if none.
uint32_t xdp_program(const std::string& ns, const std::string& dev) {
  auto r = run_command({"ip", "-n", ns, "-j", "link", "show", "dev", dev});
  if (!r.ok()) return 0;
  const json links = json::parse(r->output, nullptr, false);
  if (!links.is_array() || links.empty()) return 0;
  const json xdp = links[0].value("xdp", json::object());
  return xdp.value("prog", json::object()).value("id", 0u);
}

TEST(XdpLeftoverTest, TheSweepReportsAndRemovesTheXdpProgramOfAKilledReplay) {
  COLLIDE_REQUIRE(missing_netns());
  auto ns = TestNetns::create("xdl");
  ASSERT_TRUE(ns.ok());
  ASSERT_TRUE(run_checked({"ip", "-n", (*ns)->name(), "link", "add", "x0", "type", "veth", "peer",
                           "name", "x1"})
                  .ok());
  for (const char* dev : {"x0", "x1"}) {
    ASSERT_TRUE(run_checked({"ip", "-n", (*ns)->name(), "link", "set", dev, "up"}).ok());
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("collide-xdl-{}", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path state_dir = dir / "state";
  const std::string trace = (dir / "allreduce.trace").string();
  write_all_reduce_trace(trace, 4, 1024, true);
  setenv("COLLIDE_STATE_DIR", state_dir.c_str(), 1);
  auto replay = ChildProcess::spawn(
      {COLLIDE_BIN, "replay", trace, "--ranks=0,1", "--ranks-per-host=2",
       "--port=dpdk:net_af_xdp0,iface=x0", "--netns=" + (*ns)->name(), "--lcore=0",
       "--host-mac=1=02:00:00:00:00:01", "--results=" + (dir / "results.json").string(),
       "--wait-for-file=" + (dir / "never").string(), "--timeout=60"});
  unsetenv("COLLIDE_STATE_DIR");
  ASSERT_TRUE(replay.ok());
  auto line = replay->read_line(60s);
  ASSERT_TRUE(line.ok() && line->rfind("ready", 0) == 0)
      << (line.ok() ? *line : line.status().to_string()) << replay->remaining_output();
  const uint32_t attached = xdp_program((*ns)->name(), "x0");
  ASSERT_NE(attached, 0u) << "AF_XDP attached no XDP program";

  ASSERT_EQ(kill(replay->pid(), SIGKILL), 0);
  replay->wait(10s).ok();
  const std::string replay_output = replay->remaining_output();
  EXPECT_EQ(replay_output.find("No bpffs found"), std::string::npos)
      << "a BPF filesystem is mounted for libxdp: " << replay_output;
  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(xdp_program((*ns)->name(), "x0"), attached) << "the kernel keeps it after SIGKILL";

  auto sweep = run_command({COLLIDE_BIN, "inject", "--sweep", "--netns", (*ns)->name(),
                            "--state-dir", state_dir.string()});
  ASSERT_TRUE(sweep.ok());
  std::cout << sweep->output;
  EXPECT_EQ(sweep->exit_code, 0) << sweep->output;
  EXPECT_NE(sweep->output.find(fmt::format("undid XDP program {} on x0", attached)),
            std::string::npos)
      << sweep->output;
  EXPECT_EQ(xdp_program((*ns)->name(), "x0"), 0u) << "the sweep removed it";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace collide::testing
