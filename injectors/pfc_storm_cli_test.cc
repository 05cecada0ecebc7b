// `collide inject --pfc-storm` through the real binary, between two namespaces of the test's own
// joined by a veth pair: the storm's frames arrive at the peer as PFC for the priorities asked,
// at the rate asked, for the duration asked, from the sending interface's MAC, whether sent through
// a packet socket (--dev) or from a port DPDK drives (--port). Needs root.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "replayer/wire/pfc_frame.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

using namespace std::chrono_literals;

// What the peer saw of a storm of priorities 3 and 5 at 1000 quanta, and what the command said.
struct SeenStorm {
  process::CommandResult out;
  double seconds = 0;   // the command's run, start to end
  uint64_t pfc = 0;     // right PFC frames: priorities 3 and 5 at 1000 quanta, from `source`
  uint64_t wrong = 0;   // MAC control frames that are not that
};

class PfcStormCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_netns());
    auto a = testing::TestNetns::create("pfca");
    auto b = testing::TestNetns::create("pfcb");
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = std::move(a).value();
    b_ = std::move(b).value();
    ASSERT_TRUE(testing::create_veth_pair(*a_, "sa", *b_, "sb").ok());
    ASSERT_TRUE(testing::configure_interface(*a_, "sa", "192.0.2.1/30").ok());
    ASSERT_TRUE(testing::configure_interface(*b_, "sb", "192.0.2.2/30").ok());
  }

  // Runs `collide inject` with `args` (after the netns) while a packet socket on the peer counts
  // what arrives: it sees every frame the veth delivers, MAC control included (the kernel's stack
  // then drops those).
  void run_storm(const std::vector<std::string>& args, SeenStorm& seen) {
    int fd = -1;
    {
      auto in_b = testing::NetnsScope::enter(b_->name());
      ASSERT_TRUE(in_b.ok());
      fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
      ASSERT_GE(fd, 0);
      sockaddr_ll addr{};
      addr.sll_family = AF_PACKET;
      addr.sll_protocol = htons(ETH_P_ALL);
      addr.sll_ifindex = static_cast<int>(if_nametoindex("sb"));
      ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
      timeval tv{0, 200'000};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    const auto mac_a = testing::interface_mac(*a_, "sa");
    ASSERT_TRUE(mac_a.ok());

    std::atomic<bool> done{false};
    std::thread reader([&] {
      uint8_t buf[2048];
      while (!done.load()) {
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) continue;
        const std::span<const uint8_t> frame(buf, static_cast<size_t>(n));
        if (!replayer::wire::is_mac_control(frame)) continue;
        auto pause = replayer::wire::decode_pause(frame);
        const bool right = pause.ok() && !pause->link_pause && pause->enabled == ((1 << 3) | (1 << 5)) &&
                           pause->quanta[3] == 1000 && pause->quanta[5] == 1000 && pause->quanta[0] == 0 &&
                           pause->source.to_string() == *mac_a;
        ++(right ? seen.pfc : seen.wrong);
      }
    });
    std::vector<std::string> argv{COLLIDE_BIN, "inject", "--netns", a_->name()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto started = std::chrono::steady_clock::now();
    auto out = process::run_command(argv);
    seen.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::this_thread::sleep_for(300ms);  // the last frames reach the reader
    done.store(true);
    reader.join();
    close(fd);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    seen.out = std::move(out).value();
  }

  std::unique_ptr<testing::TestNetns> a_, b_;
};

// The command's JSON line.
nlohmann::json storm_json(const SeenStorm& seen) {
  return nlohmann::json::parse(seen.out.output.substr(seen.out.output.find('{')));
}

// 200 frames per second for 1 s, all arriving as asked; a late wake-up skips a frame rather than
// bursting.
void expect_the_storm_asked(const SeenStorm& seen) {
  ASSERT_EQ(seen.out.exit_code, 0) << seen.out.output;
  const auto json = storm_json(seen);
  const uint64_t sent = json.at("frames_sent").get<uint64_t>();
  EXPECT_GE(sent, 190u);
  EXPECT_LE(sent, 200u);
  EXPECT_EQ(json.at("frames_failed").get<uint64_t>(), 0u);
  EXPECT_EQ(seen.pfc, sent);
  EXPECT_EQ(seen.wrong, 0u);
  EXPECT_GE(seen.seconds, 0.95);
  EXPECT_LT(seen.seconds, 5.0);
}

const std::vector<std::string> kStormFlags{"--pfc-storm", "3,5", "--pfc-quanta", "1000", "--pfc-rate", "200",
                                           "--duration", "1s", "--json"};

TEST_F(PfcStormCliTest, TheStormArrivesAsPfcAtTheRateAndForTheTimeAsked) {
  std::vector<std::string> args{"--dev", "sa"};
  args.insert(args.end(), kStormFlags.begin(), kStormFlags.end());
  SeenStorm seen;
  ASSERT_NO_FATAL_FAILURE(run_storm(args, seen));
  expect_the_storm_asked(seen);
}

#if COLLIDE_TEST_DPDK
// The same storm from a port DPDK drives (a NIC bound to vfio-pci has no kernel interface to send
// from); here a virtual device on the veth. The driver's own transmit count agrees.
TEST_F(PfcStormCliTest, AStormFromADpdkPortArrivesAsPfcAndTheDriverCountsIt) {
  std::vector<std::string> args{"--port", "dpdk:net_af_packet0,iface=sa"};
  args.insert(args.end(), kStormFlags.begin(), kStormFlags.end());
  SeenStorm seen;
  ASSERT_NO_FATAL_FAILURE(run_storm(args, seen));
  expect_the_storm_asked(seen);
  const auto json = storm_json(seen);
  EXPECT_NE(json.at("dev").get<std::string>().find("net_af_packet0"), std::string::npos) << json.dump();
  EXPECT_EQ(json.at("port_tx_frames").get<uint64_t>(), json.at("frames_sent").get<uint64_t>());
  EXPECT_EQ(json.at("port_tx_errors").get<uint64_t>(), 0u);
}
#endif

TEST_F(PfcStormCliTest, AStormFromAPortNeedsAStormAndOnlyOneDevice) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--port", "dpdk:net_null0", "--loss", "1%"},
        {"--port", "dpdk:net_null0", "--dev", "sa", "--pfc-storm", "3", "--duration", "1s"},
        {"--port", "afpacket:sa", "--pfc-storm", "3", "--duration", "1s"},
        {"--dev", "sa", "--eal-arg=--no-huge", "--pfc-storm", "3", "--duration", "1s"}}) {
    std::vector<std::string> argv{COLLIDE_BIN, "inject", "--netns", a_->name()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto out = process::run_command(argv);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->exit_code, 2) << out->output;
  }
}

TEST_F(PfcStormCliTest, AStormWithoutAnEndOrWithOtherFaultsIsRefused) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"--duration", "0"}, {"--duration", "1s", "--loss", "1%"},
        {"--duration", "1s", "--pfc-rate", "0"}}) {
    std::vector<std::string> argv{COLLIDE_BIN, "inject", "--netns", a_->name(), "--dev", "sa", "--pfc-storm", "3"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto out = process::run_command(argv);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->exit_code, 2) << out->output;
  }
}

}  // namespace
}  // namespace collide
