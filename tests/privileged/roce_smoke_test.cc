// End-to-end proof that the toolchain works together: two namespaces joined by a veth pair, the
// BPF port counter on the receiver's ingress, N RoCEv2 frames sent by DPDK from one namespace and
// received by DPDK in the other. Every count must be exact.
//
// The sender uses net_af_xdp (falling back to net_af_packet). The receiver uses net_af_packet:
// an AF_XDP socket takes frames at the XDP hook, before tc ingress, so the counter would never see
// them; AF_PACKET receives after tc ingress has counted them.
#include <net/if.h>

#include <chrono>
#include <iostream>

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "collide/port.pb.h"
#include "tests/support/bpf/port_counter.h"
#include "replayer/wire/roce_frame.h"
#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::TestNetns;

constexpr uint32_t kFrames = 10000;
constexpr uint32_t kPayloadBytes = 1024;
constexpr int kExitNoDevice = 3;
const std::string kTxIf = "cl-smoke-tx";
const std::string kRxIf = "cl-smoke-rx";

v1::FrameCounters parse_counters(const std::string& json) {
  v1::FrameCounters counters;
  auto status = google::protobuf::util::JsonStringToMessage(json, &counters);
  EXPECT_TRUE(status.ok()) << "peer printed: " << json;
  return counters;
}

TEST(RoceSmokeTest, DpdkFramesCrossVethWithExactCounts) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_bpf());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));

  auto tx_ns = TestNetns::create("smoke-tx");
  ASSERT_TRUE(tx_ns.ok()) << tx_ns.status().to_string();
  auto rx_ns = TestNetns::create("smoke-rx");
  ASSERT_TRUE(rx_ns.ok()) << rx_ns.status().to_string();
  ASSERT_TRUE(testing::create_veth_pair(**tx_ns, kTxIf, **rx_ns, kRxIf).ok());
  ASSERT_TRUE(testing::configure_interface(**tx_ns, kTxIf, "198.18.0.1/24").ok());
  ASSERT_TRUE(testing::configure_interface(**rx_ns, kRxIf, "198.18.0.2/24").ok());
  auto rx_mac = testing::interface_mac(**rx_ns, kRxIf);
  ASSERT_TRUE(rx_mac.ok()) << rx_mac.status().to_string();

  // Attach the counter from inside the receiver's namespace; the link stays after we leave it.
  auto counter = testing::PortCounter::load();
  ASSERT_TRUE(counter.ok()) << counter.status().to_string();
  int rx_ifindex = 0;
  {
    auto scope = testing::NetnsScope::enter((*rx_ns)->name());
    ASSERT_TRUE(scope.ok()) << scope.status().to_string();
    rx_ifindex = static_cast<int>(if_nametoindex(kRxIf.c_str()));
    ASSERT_GT(rx_ifindex, 0);
    auto mode = (*counter)->attach(rx_ifindex, injectors::Direction::kIngress);
    ASSERT_TRUE(mode.ok()) << mode.status().to_string();
    std::cout << "counter attached via " << (*mode == injectors::TcLink::Mode::kTcx ? "TCX" : "clsact")
              << "\n";
  }

  const std::string common_args = "--count=" + std::to_string(kFrames);
  auto receiver = ChildProcess::spawn(
      {COLLIDE_ROCE_PEER, "--role=receive", "--netns=" + (*rx_ns)->name(),
       "--device=net_af_packet1,iface=" + kRxIf + ",framecnt=4096,blocksz=4096,framesz=2048",
       "--lcore=1", common_args, "--timeout-ms=30000"});
  ASSERT_TRUE(receiver.ok()) << receiver.status().to_string();
  auto ready = receiver->read_line(30s);
  ASSERT_TRUE(ready.ok()) << "receiver did not start: " << ready.status().to_string();
  ASSERT_EQ(ready->rfind("ready", 0), 0u) << *ready;

  std::string sender_pmd;
  std::string sent_json;
  for (const std::string pmd : {"net_af_xdp", "net_af_packet"}) {
    auto sender = ChildProcess::spawn(
        {COLLIDE_ROCE_PEER, "--role=send", "--netns=" + (*tx_ns)->name(),
         "--device=" + pmd + "0,iface=" + kTxIf, "--lcore=0", common_args,
         "--payload-bytes=" + std::to_string(kPayloadBytes), "--dst-mac=" + *rx_mac,
         "--timeout-ms=30000"});
    ASSERT_TRUE(sender.ok()) << sender.status().to_string();
    auto code = sender->wait(60s);
    ASSERT_TRUE(code.ok()) << code.status().to_string();
    if (*code == kExitNoDevice) {
      std::cout << pmd << " unavailable for the sender; trying the next PMD\n";
      continue;
    }
    ASSERT_EQ(*code, 0) << "sender failed";
    sender_pmd = pmd;
    sent_json = sender->remaining_output();
    break;
  }
  ASSERT_FALSE(sender_pmd.empty()) << "no PMD could send";
  std::cout << "sender PMD: " << sender_pmd << ", receiver PMD: net_af_packet\n";
  ::testing::Test::RecordProperty("sender_pmd", sender_pmd);

  auto rx_code = receiver->wait(60s);
  ASSERT_TRUE(rx_code.ok()) << rx_code.status().to_string();
  ASSERT_EQ(*rx_code, 0);
  const v1::FrameCounters sent = parse_counters(sent_json);
  const v1::FrameCounters received = parse_counters(receiver->remaining_output());

  replayer::wire::RoceHeaders h;
  h.bth.opcode = replayer::wire::Opcode::kWriteMiddle;
  const uint64_t frame_bytes = replayer::wire::roce_frame_size(h, kPayloadBytes);

  EXPECT_EQ(sent.frames(), kFrames);
  EXPECT_EQ(sent.bytes(), kFrames * frame_bytes);
  EXPECT_EQ(received.roce_frames(), kFrames);
  EXPECT_EQ(received.icrc_errors(), 0u);
  EXPECT_EQ(received.psn_errors(), 0u);
  EXPECT_EQ(received.payload_errors(), 0u);

  auto bpf = (*counter)->read({static_cast<uint32_t>(rx_ifindex), injectors::Direction::kIngress,
                               17, replayer::wire::kRoceUdpPort});
  ASSERT_TRUE(bpf.ok()) << bpf.status().to_string();
  EXPECT_EQ(bpf->packets, kFrames);
  EXPECT_EQ(bpf->bytes, kFrames * frame_bytes);
  std::cout << "sent " << sent.frames() << ", BPF counted " << bpf->packets << " ("
            << bpf->bytes << " B), DPDK received " << received.roce_frames()
            << " RoCEv2 frames with valid ICRC, " << received.other_frames() << " other frames\n";
}

}  // namespace
}  // namespace collide
