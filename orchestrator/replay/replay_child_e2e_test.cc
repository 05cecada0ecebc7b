// A whole replay through the agent's child protocol: two `collide replay-child` processes, one rank
// each, in two namespaces joined by a veth pair, driven only by ReplayRequest, go, and what they
// answer (ready, progress, completion). Needs root.
#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/process.h"
#include "orchestrator/replay/replay_child.h"
#include "tests/support/all_reduce_trace.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide::orchestrator::replay {
namespace {

using namespace std::chrono_literals;

std::string mac_of(const testing::TestNetns& ns, const std::string& ifname) {
  auto out = process::run_command({"ip", "netns", "exec", ns.name(), "cat", "/sys/class/net/" + ifname + "/address"});
  if (!out.ok() || out->exit_code != 0) return "";
  return out->output.substr(0, out->output.find('\n'));
}

TEST(ReplayChildE2eTest, RequestGoProgressAndCompletionRoundTrip) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("setpriv"));
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("collide-child-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "job.trace").string();
  // Big enough to take a few progress periods on AF_PACKET.
  testing::write_all_reduce_trace(trace, 2, 64ull << 20, /*declare_comm=*/true);
  auto a = testing::TestNetns::create("rca");
  auto b = testing::TestNetns::create("rcb");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(testing::create_veth_pair(**a, "v0", **b, "v1").ok());
  ASSERT_TRUE((*a)->exec({"ip", "link", "set", "v0", "up"}).ok());
  ASSERT_TRUE((*b)->exec({"ip", "link", "set", "v1", "up"}).ok());
  const std::string mac[2] = {mac_of(**a, "v0"), mac_of(**b, "v1")};
  ASSERT_FALSE(mac[0].empty());
  ASSERT_FALSE(mac[1].empty());

  std::vector<ReplayChild> children;
  for (uint32_t h = 0; h < 2; ++h) {
    auto child = ReplayChild::spawn({COLLIDE_BIN, "--log-level=warn", "replay-child"});
    ASSERT_TRUE(child.ok()) << child.status().to_string();
    children.push_back(std::move(child).value());
    v1::ReplayCommand command;
    v1::ReplayRequest& r = *command.mutable_request();
    r.set_run_index(7);
    r.set_trace_file(trace);
    r.add_ranks(h);
    r.set_ranks_per_host(1);
    v1::ReplayNic* nic = r.add_nics();
    nic->set_port(h == 0 ? "afpacket:v0" : "afpacket:v1");
    nic->set_next_hop_mac(mac[1 - h]);
    r.set_netns(h == 0 ? (*a)->name() : (*b)->name());
    r.set_verify_payload(true);
    r.set_timeout_s(60);
    r.set_progress_every_s(0.05);
    ASSERT_TRUE(children.back().send(command).ok());
  }
  for (uint32_t h = 0; h < 2; ++h) {
    auto ready = children[h].receive(60s);
    ASSERT_TRUE(ready.ok()) << ready.status().to_string();
    ASSERT_TRUE(ready->has_value());
    ASSERT_TRUE((*ready)->has_ready()) << (*ready)->DebugString();
    EXPECT_EQ((*ready)->ready().mac(), mac[h]);
  }
  v1::ReplayCommand go;
  go.mutable_go();
  for (auto& c : children) ASSERT_TRUE(c.send(go).ok());
  for (uint32_t h = 0; h < 2; ++h) {
    size_t progress = 0;
    std::optional<v1::RunCompletion> done;
    while (!done) {
      auto event = children[h].receive(90s);
      ASSERT_TRUE(event.ok()) << event.status().to_string();
      ASSERT_TRUE(event->has_value()) << "no event within 90 s";
      if ((*event)->has_progress()) {
        EXPECT_EQ((*event)->progress().run_index(), 7u);
        ++progress;
      }
      if ((*event)->has_completion()) done = (*event)->completion();
    }
    EXPECT_TRUE(done->ok()) << done->failure();
    EXPECT_EQ(done->run_index(), 7u);
    ASSERT_EQ(done->ops_size(), 1);
    EXPECT_EQ(done->ops(0).rank(), h);
    EXPECT_EQ(done->ops(0).kind(), "all_reduce");
    EXPECT_EQ(done->ops(0).bytes(), 64ull << 20);
    EXPECT_GT(done->ops(0).end_ns(), done->ops(0).start_ns());
    EXPECT_GT(done->packets_sent(), 0u);
    EXPECT_GT(progress, 0u) << "a run of several periods reported no progress";
    auto code = children[h].wait(30s);
    ASSERT_TRUE(code.ok());
    EXPECT_EQ(*code, 0);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collide::orchestrator::replay
