// `collide inject` end to end: the command acts on a veth end inside a namespace while a kernel
// socket sends RoCEv2-shaped datagrams through it; its JSON counters and event file must agree
// with what the receiver got. Bad flags end with the usage exit code and a message naming them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::NetnsScope;
using testing::TestNetns;

constexpr uint32_t kCount = 1000;

// `collide inject --every-nth 10` on the receiver's ingress, with `hook_flags` choosing the hook.
void inject_drops_every_tenth(const std::string& hook_flags) {
  auto tx = TestNetns::create("fcli-tx");
  ASSERT_TRUE(tx.ok()) << tx.status().to_string();
  auto rx = TestNetns::create("fcli-rx");
  ASSERT_TRUE(rx.ok()) << rx.status().to_string();
  ASSERT_TRUE(testing::create_veth_pair(**tx, "cl-fcli-tx", **rx, "cl-fcli-rx").ok());
  ASSERT_TRUE(testing::configure_interface(**tx, "cl-fcli-tx", "198.18.9.1/24").ok());
  ASSERT_TRUE(testing::configure_interface(**rx, "cl-fcli-rx", "198.18.9.2/24").ok());
  const std::string events =
      (std::filesystem::temp_directory_path() / ("collide-inject-" + std::to_string(getpid())))
          .string();

  // stderr joins stdout so the test sees the line saying the rules are armed; the JSON follows.
  const std::string command = std::string("exec ") + COLLIDE_BIN +
                              " --log-level warn inject --netns " + (*rx)->name() +
                              " --dev cl-fcli-rx --direction ingress " + hook_flags +
                              " --proto udp --dport 4791 --opcode write --every-nth 10 --json --events " + events + " 2>&1";
  auto inject = ChildProcess::spawn({"/bin/sh", "-c", command});
  ASSERT_TRUE(inject.ok()) << inject.status().to_string();
  auto armed = inject->read_line(30s);
  ASSERT_TRUE(armed.ok()) << armed.status().to_string();
  ASSERT_NE(armed->find("rule(s) on cl-fcli-rx"), std::string::npos) << *armed;

  const int rx_fd = udp_socket(**rx, "198.18.9.2", 4791, nullptr, 0, 8 << 20, 200ms);
  const int tx_fd = udp_socket(**tx, "198.18.9.1", 49152, "198.18.9.2", 4791, 8 << 20, 200ms);
  ASSERT_GE(rx_fd, 0);
  ASSERT_GE(tx_fd, 0);
  std::vector<uint8_t> d(12 + 64, 0);
  d[0] = 0x0a;  // RDMA WRITE ONLY
  for (uint32_t seq = 0; seq < kCount; ++seq) {
    d[9] = static_cast<uint8_t>(seq >> 16);
    d[10] = static_cast<uint8_t>(seq >> 8);
    d[11] = static_cast<uint8_t>(seq);
    ASSERT_EQ(send(tx_fd, d.data(), d.size(), 0), static_cast<ssize_t>(d.size()));
    if (seq % 50 == 49) std::this_thread::sleep_for(1ms);
  }
  uint32_t received = 0;
  std::vector<uint8_t> buf(2048);
  while (recv(rx_fd, buf.data(), buf.size(), 0) > 0) ++received;
  close(rx_fd);
  close(tx_fd);

  ASSERT_EQ(kill(inject->pid(), SIGTERM), 0);
  auto code = inject->wait(10s);
  ASSERT_TRUE(code.ok()) << code.status().to_string();
  ASSERT_EQ(*code, 0);
  const std::string out = inject->remaining_output();
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  ASSERT_EQ(j["rules"].size(), 1u) << out;
  EXPECT_EQ(j["rules"][0]["matched"], kCount);
  EXPECT_EQ(j["rules"][0]["acted"], kCount / 10);
  EXPECT_EQ(received, kCount - kCount / 10);

  std::ifstream in(events);
  std::vector<uint32_t> psns;
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(e.is_discarded()) << line;
    EXPECT_EQ(e["action"], "drop");
    psns.push_back(e["psn"].get<uint32_t>());
  }
  std::filesystem::remove(events);
  ASSERT_EQ(psns.size(), kCount / 10);
  for (size_t i = 0; i < psns.size(); ++i) EXPECT_EQ(psns[i], 10 * i + 9);
}

TEST(FaultCliTest, InjectDropsEveryTenthAndReportsIt) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_bpf());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  inject_drops_every_tenth("");
}

TEST(FaultCliTest, InjectOnXdpDropsEveryTenthAndReportsIt) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_bpf());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  inject_drops_every_tenth("--xdp");
}

TEST(FaultCliTest, BadFlagsAreUsageErrors) {
  COLLIDE_REQUIRE(testing::missing_root());
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--dev", "lo", "--loss", "150%"}, "--loss"},
      {{"--dev", "lo", "--gilbert", "p=0.1"}, "--gilbert"},
      {{"--dev", "lo", "--police", "10gbit"}, "--police"},
      {{"--dev", "lo", "--loss", "1%", "--window", "2s,1s"}, "--window"},
      {{"--dev", "lo", "--loss", "1%", "--src", "10.0.0.0/40"}, "--src"},
      {{"--dev", "lo"}, "no fault given"},
      {{"--dev", "cl-no-such-dev", "--loss", "1%"}, "no such device"},
      {{"--dev", "lo", "--xdp", "--direction", "egress", "--loss", "1%"}, "--xdp acts on ingress"},
      {{"--dev", "lo", "--xdp", "--duplicate", "1%"}, "--xdp cannot --duplicate"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {COLLIDE_BIN, "inject"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = testing::run_command(argv);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 2) << r->output;
    EXPECT_NE(r->output.find(c.says), std::string::npos) << r->output;
  }
}

}  // namespace
}  // namespace collide
