// Engines per queue end to end: two `collide replay` processes, one rank each, joined by a memif
// pair of two queues (each queue of one end feeds the same queue of the other, so a frame stays
// on its sender's lane: --queue-steering=none is right here). Each NIC runs two engines on two
// queues, each a lane of the channels; the all-reduce completes byte-verified, both lanes of
// both NICs carried traffic and no frame reached another lane's queue.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/all_reduce_trace.h"
#include "tests/support/command.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;

constexpr uint64_t kBytes = 64ull << 20;

class ReplayLanesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_root());
    dir_ = std::filesystem::temp_directory_path() / ("collide-lanes-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    trace_ = (dir_ / "allreduce.trace").string();
    testing::write_all_reduce_trace(trace_, 2, kBytes, true);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // One host of the pair: `role` server or client of the memif socket, rank `rank`, its two
  // engines pinned to `cores`.
  std::vector<std::string> argv_of(const std::string& role, int rank, const std::string& cores,
                                   const std::string& steering) {
    const std::string memif = "dpdk:net_memif" + std::to_string(rank) + ",role=" + role +
                              ",socket=" + (dir_ / "memif.sock").string() + ",bsize=2048,rsize=11";
    std::vector<std::string> argv = {
        COLLIDE_BIN, "replay", trace_, "--ranks=" + std::to_string(rank), "--ranks-per-host=1",
        "--port=" + memif, "--queues-per-nic=2", "--queue-steering=" + steering,
        "--engine-cores=" + cores, "--lcore=" + std::to_string(rank), "--channels=4",
        "--mtu=1024", "--slice-bytes=1048576", "--next-hop-mac=02:00:00:00:00:0" + std::to_string(1 - rank),
        "--results=" + (dir_ / (std::to_string(rank) + ".json")).string(),
        "--wait-for-file=" + (dir_ / "go").string(), "--timeout=120"};
    return argv;
  }
  // Its log goes to <rank>.log: the server's says when its port started.
  ChildProcess start(const std::string& role, int rank, const std::string& cores) {
    std::string command = "exec";
    for (const std::string& arg : argv_of(role, rank, cores, "none")) command += " '" + arg + "'";
    command += " 2>'" + (dir_ / (std::to_string(rank) + ".log")).string() + "'";
    auto child = ChildProcess::spawn({"/bin/sh", "-c", command});
    EXPECT_TRUE(child.ok()) << child.status().to_string();
    return std::move(child).value();
  }

  std::filesystem::path dir_;
  std::string trace_;
};

TEST_F(ReplayLanesTest, TwoQueuesPerNicEachRunALaneOfTheChannels) {
  // A memif client that connects before the server's port started is turned away for good: the
  // client starts once the server says its port started (and waits for the link from then on).
  ChildProcess server = start("server", 0, "0,1");
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  auto server_started = [&] {
    std::ifstream log(dir_ / "0.log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    return text.find("(net_memif) started") != std::string::npos;
  };
  while (!server_started() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(server_started()) << "the server's port did not start";
  ChildProcess client = start("client", 1, "1,0");
  for (ChildProcess* c : {&server, &client}) {
    auto line = c->read_line(60s);
    ASSERT_TRUE(line.ok()) << "replay did not start: " << line.status().to_string();
    ASSERT_EQ(line->rfind("ready", 0), 0u) << *line;
  }
  std::ofstream(dir_ / "go").close();
  auto code_server = server.wait(180s);
  auto code_client = client.wait(180s);
  ASSERT_TRUE(code_server.ok() && code_client.ok());
  EXPECT_EQ(*code_server, 0);
  EXPECT_EQ(*code_client, 0);

  uint64_t received = 0;
  for (int rank : {0, 1}) {
    std::ifstream in(dir_ / (std::to_string(rank) + ".json"));
    ASSERT_TRUE(in.good()) << "no results of rank " << rank;
    const auto r = nlohmann::json::parse(in);
    EXPECT_TRUE(r["ok"].get<bool>()) << r["failure"];
    ASSERT_EQ(r["ops"].size(), 1u);
    EXPECT_FALSE(r["ops"][0]["failed"].get<bool>());
    const auto& c = r["counters"];
    EXPECT_EQ(c["pattern_errors"].get<uint64_t>(), 0u);
    EXPECT_EQ(c["rx_wrong_lane"].get<uint64_t>(), 0u);
    received += c["payload_bytes_received"].get<uint64_t>();
    ASSERT_EQ(r["nics"].size(), 1u);
    EXPECT_EQ(r["nics"][0]["queues"].get<uint32_t>(), 2u);
    // Each queue's engine sent and received its lane's frames: two channels each.
    const auto& lanes = r["nics"][0]["lanes"];
    ASSERT_EQ(lanes.size(), 2u);
    for (const auto& lane : lanes) {
      EXPECT_GT(lane["payload_bytes_received"].get<uint64_t>(), kBytes / 4) << lane.dump();
      EXPECT_GT(lane["tx_frames"].get<uint64_t>(), 0u) << lane.dump();
    }
  }
  // Two ranks: each sends the other 2(n-1)/n = 1 of the buffer, every byte received once.
  EXPECT_EQ(received, 2 * kBytes);
}

// Flow-rule steering on a device without a flow API: refused before the run, naming the device.
TEST_F(ReplayLanesTest, FlowRuleSteeringOnADeviceWithoutFlowRulesIsRefused) {
  auto refused = testing::run_command(argv_of("server", 0, "0,1", "flow-rules"));
  ASSERT_TRUE(refused.ok()) << refused.status().to_string();
  EXPECT_NE(refused->exit_code, 0);
  EXPECT_NE(refused->output.find("(net_memif) cannot steer RoCE frames to queue 0"), std::string::npos)
      << refused->output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "0.json"));
}

}  // namespace
}  // namespace collide
