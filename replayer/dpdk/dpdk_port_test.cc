#include "replayer/dpdk/dpdk_port.h"
#include "replayer/dpdk/lane_steering.h"
#include "replayer/engine/entropy_port.h"

#include <rte_ethdev.h>
#include <unistd.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "replayer/backend/dpdk_backend.h"
#include "replayer/backend/engine_thread.h"
#include "replayer/backend/port_factory.h"
#include "replayer/dpdk/eal.h"
#include "replayer/transport/frame_codec.h"
#include "replayer/wire/roce_frame.h"
#include "tests/support/privileged.h"

namespace collide::replayer::dpdk {
namespace {

constexpr uint16_t kBurst = 32;

std::string missing_eal() {
  if (auto why = collide::testing::missing_root(); !why.empty()) return why;
  Status s = init_eal(virtual_device_eal_args(0));
  return s.ok() ? "" : "DPDK EAL does not start here: " + s.to_string();
}

wire::RoceHeaders headers(uint32_t psn) {
  wire::RoceHeaders h;
  h.endpoints.src_ip = *wire::Ipv4Address::parse("198.18.0.1");
  h.endpoints.dst_ip = *wire::Ipv4Address::parse("198.18.0.2");
  h.bth.opcode = wire::Opcode::kWriteMiddle;
  h.bth.dest_qp = 7;
  h.bth.psn = psn;
  return h;
}

// Builds `count` RoCE frames with consecutive PSNs into freshly allocated buffers.
std::vector<rte_mbuf*> build_frames(DpdkPort& port, uint16_t count, uint32_t first_psn) {
  std::vector<rte_mbuf*> mbufs(count);
  EXPECT_TRUE(port.alloc_burst(mbufs.data(), count).ok());
  std::array<uint8_t, 256> payload{};
  for (uint16_t i = 0; i < count; ++i) {
    auto* data = rte_pktmbuf_mtod(mbufs[i], uint8_t*);
    auto len = wire::write_roce_frame({data, port.max_frame_size()}, headers(first_psn + i),
                                      payload);
    EXPECT_TRUE(len.ok());
    mbufs[i]->data_len = static_cast<uint16_t>(*len);
    mbufs[i]->pkt_len = *len;
  }
  return mbufs;
}

// Sends a burst of `kBurst` fresh frames on `queue`, frees what the port did not take, and
// returns how many it took.
uint16_t send_burst(DpdkPort& port, uint32_t first_psn, uint16_t queue = 0) {
  auto frames = build_frames(port, kBurst, first_psn);
  const uint16_t sent = port.tx_burst(frames.data(), kBurst, queue);
  for (uint16_t i = sent; i < kBurst; ++i) rte_pktmbuf_free(frames[i]);
  return sent;
}

TEST(DpdkPortTest, RingPortLoopsFramesBackIntact) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_ring0");
  auto port = DpdkPort::open(config);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  EXPECT_EQ((*port)->driver(), "net_ring");

  auto frames = build_frames(**port, kBurst, 100);
  ASSERT_EQ((*port)->tx_burst(frames.data(), kBurst), kBurst);

  std::array<rte_mbuf*, kBurst> received{};
  const uint16_t n = (*port)->rx_burst(received.data(), kBurst);
  ASSERT_EQ(n, kBurst);
  for (uint16_t i = 0; i < n; ++i) {
    auto parsed = wire::parse_roce_frame(
        {rte_pktmbuf_mtod(received[i], const uint8_t*), received[i]->data_len});
    ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
    EXPECT_TRUE(parsed->icrc_ok());
    EXPECT_EQ(parsed->headers.bth.psn, 100u + i);
    rte_pktmbuf_free(received[i]);
  }
  auto stats = (*port)->stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->tx_packets, kBurst);
  EXPECT_EQ(stats->rx_packets, kBurst);
}

TEST(DpdkPortTest, NullPortSwallowsEveryFrame) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_null0");
  auto port = DpdkPort::open(config);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  uint64_t sent = 0;
  for (int round = 0; round < 100; ++round) {
    sent += send_burst(**port, static_cast<uint32_t>(round * kBurst));
  }
  EXPECT_EQ(sent, 100u * kBurst);
  EXPECT_EQ((*port)->stats()->tx_packets, sent);
}

// net_null has no PFC of its own: the port opens all the same and says so. (A NIC whose driver has
// it needs that NIC: this machine has none.)
TEST(DpdkPortTest, NicPfcOnADriverWithoutItOpensAndSaysSo) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_null12");
  config.mutable_nic_pfc()->set_priority(3);
  auto port = DpdkPort::open(config);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  EXPECT_EQ((*port)->nic_pfc(), "NIC PFC: net_null has none (collide's own pause frames only)");
  v1::DpdkPortConfig plain;
  plain.set_device("net_null13");
  auto without = DpdkPort::open(plain);
  ASSERT_TRUE(without.ok()) << without.status().to_string();
  EXPECT_EQ((*without)->nic_pfc(), "");  // not asked: left as configured
}

TEST(DpdkPortTest, UnknownDeviceIsAClearError) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_af_packet9,iface=collide-no-such-if");
  auto port = DpdkPort::open(config);
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("net_af_packet9"), std::string::npos)
      << port.status().to_string();
}

// An open that fails before it finds its device's port leaves every other port alone: port 0,
// the first a process gets, survives even while stopped (DPDK refuses to close a started port, so
// a stopped one is what a stray close would take away).
TEST(DpdkPortTest, FailedOpenLeavesOtherPortsOpen) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig good;
  good.set_device("net_null3");
  auto port = DpdkPort::open(good);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  // Earlier tests in this process released their ports, so the first free id is 0 again.
  ASSERT_EQ((*port)->port_id(), 0);
  ASSERT_EQ(rte_eth_dev_stop(0), 0);

  v1::DpdkPortConfig bad;
  bad.set_device("net_af_packet8,iface=collide-no-such-if");
  ASSERT_FALSE(DpdkPort::open(bad).ok());

  ASSERT_TRUE(rte_eth_dev_is_valid_port(0)) << "port 0 was closed by the failed open";
  ASSERT_EQ(rte_eth_dev_start(0), 0);
  EXPECT_EQ(send_burst(**port, 0), kBurst);
  EXPECT_TRUE((*port)->stats().ok());
}

TEST(DpdkPortTest, EalRefusesDifferentArgumentsLater) {
  COLLIDE_REQUIRE(missing_eal());
  EXPECT_TRUE(init_eal(virtual_device_eal_args(0)).ok());
  EXPECT_EQ(init_eal({"--no-pci"}).code(), StatusCode::kFailedPrecondition);
}

// Virtual devices report their link up as soon as they start; a link that stays down fails the
// wait with the port's name and what its link says.
TEST(DpdkPortTest, LinkDownTimesOutNamingThePort) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_ring5");
  auto port = DpdkPort::open(config);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  EXPECT_TRUE((*port)->wait_for_link_up(std::chrono::milliseconds(0)).ok());  // up at once

  ASSERT_EQ(rte_eth_dev_set_link_down((*port)->port_id()), 0);
  const auto start = std::chrono::steady_clock::now();
  const Status down = (*port)->wait_for_link_up(std::chrono::milliseconds(60));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(60));
  ASSERT_EQ(down.code(), StatusCode::kDeadlineExceeded) << down.to_string();
  EXPECT_NE(down.message().find("'net_ring5'"), std::string::npos) << down.message();
  EXPECT_NE(down.message().find("link down"), std::string::npos) << down.message();

  ASSERT_EQ(rte_eth_dev_set_link_up((*port)->port_id()), 0);
  EXPECT_TRUE((*port)->wait_for_link_up(std::chrono::milliseconds(60)).ok());
}

// net_ring's queue i sends into its ring i and receives from it: frames stay on their queue.
TEST(DpdkPortTest, EachQueueCarriesItsOwnFrames) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_ring6");
  config.set_queues(3);
  config.set_queue_steering(v1::DpdkPortConfig::QUEUE_STEERING_NONE);
  auto port = DpdkPort::open(config);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  ASSERT_EQ((*port)->queue_count(), 3);
  for (uint16_t q = 0; q < 3; ++q) {
    auto frames = build_frames(**port, static_cast<uint16_t>(4 + q), 1000 * q);
    ASSERT_EQ((*port)->tx_burst(frames.data(), static_cast<uint16_t>(frames.size()), q),
              frames.size());
  }
  for (uint16_t q = 0; q < 3; ++q) {
    std::array<rte_mbuf*, kBurst> received{};
    const uint16_t n = (*port)->rx_burst(received.data(), kBurst, q);
    EXPECT_EQ(n, 4 + q) << "queue " << q;
    for (uint16_t i = 0; i < n; ++i) {
      auto parsed = wire::parse_roce_frame(
          {rte_pktmbuf_mtod(received[i], const uint8_t*), received[i]->data_len});
      ASSERT_TRUE(parsed.ok());
      EXPECT_EQ(parsed->headers.bth.psn, 1000u * q + i);
      rte_pktmbuf_free(received[i]);
    }
    auto stats = (*port)->queue_stats(q);
    ASSERT_TRUE(stats.ok()) << stats.status().to_string();
    EXPECT_EQ(stats->tx_packets, 4u + q);
    EXPECT_EQ(stats->rx_packets, 4u + q);
  }
  EXPECT_EQ((*port)->stats()->tx_packets, 4u + 5u + 6u);
  EXPECT_FALSE((*port)->queue_stats(3).ok());
}

// net_null hashes (it offers RSS), so a port of several queues configures receive-side scaling.
TEST(DpdkPortTest, SeveralQueuesWithReceiveSideScaling) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_null6");
  config.set_queues(4);
  config.set_queue_steering(v1::DpdkPortConfig::QUEUE_STEERING_NONE);
  auto port = DpdkPort::open(config);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  rte_eth_rss_conf rss{};
  ASSERT_EQ(rte_eth_dev_rss_hash_conf_get((*port)->port_id(), &rss), 0);
  EXPECT_NE(rss.rss_hf & RTE_ETH_RSS_NONFRAG_IPV4_UDP, 0u);
  for (uint16_t q = 0; q < 4; ++q) {
    EXPECT_EQ(send_burst(**port, 0, q), kBurst);
    EXPECT_EQ((*port)->queue_stats(q)->tx_packets, kBurst);
  }
}

TEST(DpdkPortTest, TooManyQueuesIsAClearError) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_ring7");
  config.set_queues(17);  // net_ring has 16
  config.set_queue_steering(v1::DpdkPortConfig::QUEUE_STEERING_NONE);
  auto port = DpdkPort::open(config);
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(port.status().message().find("17 queues"), std::string::npos)
      << port.status().message();
  config.set_queues(65);
  EXPECT_EQ(DpdkPort::open(config).status().code(), StatusCode::kInvalidArgument);
}

// By default a port of several queues steers each QP to its lane's queue by flow rules: a device
// without a flow API (net_null) is refused with what it lacks, and the refusal leaves nothing
// behind (the same device opens again without rules).
TEST(DpdkPortTest, SeveralQueuesNeedADeviceThatSteersByFlowRules) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_null10");
  config.set_queues(2);
  auto refused = DpdkPort::open(config);
  ASSERT_FALSE(refused.ok());
  const std::string& why = refused.status().message();
  EXPECT_NE(why.find("'net_null10' (net_null) cannot steer RoCE frames to queue 0"), std::string::npos) << why;
  EXPECT_NE(why.find("queue_steering: none"), std::string::npos) << why;
  config.set_queue_steering(v1::DpdkPortConfig::QUEUE_STEERING_NONE);
  auto opened = DpdkPort::open(config);
  EXPECT_TRUE(opened.ok()) << opened.status().to_string();
}

TEST(DpdkPortTest, QueueCountsTheSourcePortCannotNameAreRefusedBeforeTheDeviceIsTouched) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_null11");
  config.set_queues(3);
  auto refused = DpdkPort::open(config);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("power of two up to 16"), std::string::npos)
      << refused.status().message();
  uint16_t id = 0;
  EXPECT_NE(rte_eth_dev_get_port_by_name("net_null11", &id), 0) << "probed anyway";
}

// The rule of queue q matches source ports whose low bits are q: steered_port's lane bits.
TEST(LaneRulesTest, OneRulePerQueueOnTheSourcePortsLowBits) {
  auto rules = lane_rules(4);
  ASSERT_TRUE(rules.ok()) << rules.status().to_string();
  ASSERT_EQ(rules->size(), 4u);
  for (uint16_t q = 0; q < 4; ++q) {
    EXPECT_EQ((*rules)[q].queue, q);
    EXPECT_EQ((*rules)[q].source_value, q);
    EXPECT_EQ((*rules)[q].source_mask, 3);
    // A QP of channel turn t lands on queue t % 4, whatever the entropy around it.
    for (uint32_t turn = 0; turn < 16; ++turn) {
      const uint16_t port = engine::steered_port(0xfedc, turn);
      EXPECT_EQ((port & (*rules)[q].source_mask) == (*rules)[q].source_value, turn % 4 == q);
    }
  }
  EXPECT_TRUE(lane_rules(1)->empty());
  EXPECT_FALSE(lane_rules(32).ok());
  EXPECT_FALSE(lane_rules(6).ok());
}

// A thread the EAL did not start gets an lcore id (and so its own mempool cache) once registered,
// and gives it back when it unregisters. (backend::register_engine_thread, for code built without
// DPDK's flags, does the same once the EAL is up.)
TEST(DpdkPortTest, EngineThreadsRegisterWithTheEal) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_null7");
  auto port = DpdkPort::open(config);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  unsigned before = 0, during = 0, again = 0, after = 0;
  uint16_t sent = 0;
  bool has_cache = false;
  Status registered, twice;
  std::thread engine([&] {
    before = rte_lcore_id();
    registered = register_current_thread();
    during = rte_lcore_id();
    twice = backend::register_engine_thread();  // already registered: no second id
    again = rte_lcore_id();
    has_cache = rte_mempool_default_cache((*port)->tx_mempool(), during) != nullptr;
    sent = send_burst(**port, 0);
    unregister_current_thread();
    after = rte_lcore_id();
  });
  engine.join();
  EXPECT_EQ(before, LCORE_ID_ANY);
  ASSERT_TRUE(registered.ok()) << registered.to_string();
  EXPECT_TRUE(twice.ok());
  EXPECT_NE(during, LCORE_ID_ANY);
  EXPECT_EQ(again, during);
  EXPECT_TRUE(has_cache);
  EXPECT_EQ(sent, kBurst);
  EXPECT_EQ(after, LCORE_ID_ANY);
  EXPECT_EQ(rte_lcore_has_role(during, ROLE_NON_EAL), 0) << "the lcore id was not given back";
}

// A host's ports open together, on one EAL start, their links up; a port of several queues has a
// view per queue, which sends and receives on its own queue only and counts its own frames.
TEST(DpdkPortTest, PortsOpenTogetherWithAViewPerQueue) {
  COLLIDE_REQUIRE(missing_eal());
  backend::PortOptions options;
  options.dpdk.set_eal_heap_mb(256);  // the EAL this process started (virtual_device_eal_args)
  options.dpdk.set_queues(2);
  options.dpdk.set_queue_steering(v1::DpdkPortConfig::QUEUE_STEERING_NONE);
  options.dpdk.set_mbuf_count(4095);
  options.dpdk.set_rx_ring_size(512);
  options.dpdk.set_tx_ring_size(512);
  auto ports = backend::open_ports({"dpdk:net_ring9", "dpdk:net_null9"}, options);
  ASSERT_TRUE(ports.ok()) << ports.status().to_string();
  ASSERT_EQ(ports->size(), 2u);
  backend::PacketPort& ring = *ports->at(0);
  ASSERT_EQ(ring.queue_count(), 2u);
  EXPECT_EQ(ring.queue(1).describe(), "dpdk net_ring9 (net_ring) queue 1");
  EXPECT_EQ(ports->at(1)->queue_count(), 2u);

  std::vector<backend::Frame> frames(5);
  ASSERT_TRUE(ring.queue(1).acquire(frames).ok());
  std::array<uint8_t, 64> payload{};
  for (uint32_t i = 0; i < frames.size(); ++i) {
    auto len = wire::write_roce_frame({frames[i].data, frames[i].capacity}, headers(i), payload);
    ASSERT_TRUE(len.ok());
    frames[i].len = static_cast<uint32_t>(*len);
  }
  ASSERT_EQ(ring.queue(1).submit(frames), frames.size());
  std::vector<backend::Frame> received(32);
  EXPECT_EQ(ring.queue(0).receive(received), 0);
  const uint16_t n = ring.queue(1).receive(received);
  ASSERT_EQ(n, frames.size());
  for (uint16_t i = 0; i < n; ++i) {
    auto parsed = wire::parse_roce_frame({received[i].data, received[i].len});
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->headers.bth.psn, i);
  }
  ring.queue(1).release(std::span<backend::Frame>(received).first(n));
  EXPECT_EQ(ring.queue(1).counters().tx_frames, frames.size());
  EXPECT_EQ(ring.queue(1).counters().rx_frames, frames.size());
  EXPECT_EQ(ring.queue(0).counters().tx_frames, 0u);
  EXPECT_EQ(ring.counters().tx_frames, frames.size());  // the whole port
}

// The two ends of a memif pair in one process come up only once both are open: open_ports opens
// all, then waits for every link; an end whose peer never comes stays down, and says so.
TEST(DpdkPortTest, MemifPairComesUpTogetherAndALoneEndTimesOut) {
  COLLIDE_REQUIRE(missing_eal());
  const std::string socket = "/tmp/collide-port-test-" + std::to_string(::getpid()) + ".sock";
  backend::PortOptions options;
  options.dpdk.set_eal_heap_mb(256);  // the EAL this process started (virtual_device_eal_args)
  options.dpdk.set_mbuf_count(2047);
  options.dpdk.set_link_up_timeout_ms(5000);
  {
    auto pair = backend::open_ports(
        {"dpdk:net_memif10,role=server,id=0,socket=" + socket,
         "dpdk:net_memif11,role=client,id=0,socket=" + socket},
        options);
    ASSERT_TRUE(pair.ok()) << pair.status().to_string();
    // What one end sends, the other receives.
    std::vector<backend::Frame> frames(4);
    ASSERT_TRUE(pair->at(1)->acquire(frames).ok());
    std::array<uint8_t, 64> payload{};
    for (uint32_t i = 0; i < frames.size(); ++i) {
      auto len = wire::write_roce_frame({frames[i].data, frames[i].capacity}, headers(i), payload);
      ASSERT_TRUE(len.ok());
      frames[i].len = static_cast<uint32_t>(*len);
    }
    ASSERT_EQ(pair->at(1)->submit(frames), frames.size());
    std::vector<backend::Frame> received(32);
    uint16_t n = 0;
    for (int attempt = 0; attempt < 100 && n < frames.size(); ++attempt) {
      n += pair->at(0)->receive(std::span<backend::Frame>(received).subspan(n));
      if (n < frames.size()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(n, frames.size());
    pair->at(0)->release(std::span<backend::Frame>(received).first(n));
    // The client first, the server once its interrupt thread has seen the client go: memif
    // frees the connection's memory there, and closing both at once races with it.
    pair->at(1).reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  options.dpdk.set_link_up_timeout_ms(150);
  const auto start = std::chrono::steady_clock::now();
  auto alone = backend::open_ports({"dpdk:net_memif12,role=server,id=0,socket=" + socket + "x"},
                                   options);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(alone.status().message().find("'net_memif12'"), std::string::npos)
      << alone.status().message();
  EXPECT_NE(alone.status().message().find("link down"), std::string::npos)
      << alone.status().message();
}

// Transmit buffers come back with the memo their last writer left; plain allocation clears it,
// so a writer that knows nothing of memos never leaves a stale one behind.
TEST(DpdkPortTest, TransmitBuffersCarryTheirPayloadMemo) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_null1");
  auto port = DpdkPort::open(config);
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  std::array<rte_mbuf*, kBurst> mbufs{};
  std::array<uint64_t, kBurst> memos{};
  ASSERT_TRUE((*port)->alloc_burst(mbufs.data(), kBurst, memos.data()).ok());
  for (uint16_t i = 0; i < kBurst; ++i) {
    EXPECT_EQ(memos[i], 0u);  // fresh buffers hold nothing known
    EXPECT_EQ(mbufs[i]->pool, (*port)->tx_mempool());
    DpdkPort::set_payload_memo(mbufs[i], 1000 + i);
  }
  const std::vector<rte_mbuf*> first(mbufs.begin(), mbufs.end());
  rte_pktmbuf_free_bulk(mbufs.data(), kBurst);

  // The per-lcore cache hands the same buffers back; each has its own memo.
  ASSERT_TRUE((*port)->alloc_burst(mbufs.data(), kBurst, memos.data()).ok());
  int recognised = 0;
  for (uint16_t i = 0; i < kBurst; ++i) {
    auto it = std::find(first.begin(), first.end(), mbufs[i]);
    if (it == first.end()) continue;
    ++recognised;
    EXPECT_EQ(memos[i], 1000u + static_cast<uint64_t>(it - first.begin()));
  }
  EXPECT_GT(recognised, 0);
  rte_pktmbuf_free_bulk(mbufs.data(), kBurst);

  // Allocation without asking clears the memos: the next user sees unknown.
  ASSERT_TRUE((*port)->alloc_burst(mbufs.data(), kBurst).ok());
  rte_pktmbuf_free_bulk(mbufs.data(), kBurst);
  ASSERT_TRUE((*port)->alloc_burst(mbufs.data(), kBurst, memos.data()).ok());
  for (uint16_t i = 0; i < kBurst; ++i) EXPECT_EQ(memos[i], 0u);
  rte_pktmbuf_free_bulk(mbufs.data(), kBurst);
}

// Through the backend port and the frame encoder, as the engine sends: frames built on reused
// buffers, whose zeros are not rewritten, still parse with a correct ICRC and zero payload, and
// a buffer scribbled on by a writer that sets no memo is rewritten in full.
TEST(DpdkPortTest, ReusedBuffersStillCarryCorrectFrames) {
  COLLIDE_REQUIRE(missing_eal());
  v1::DpdkPortConfig config;
  config.set_device("net_null2");
  auto opened = DpdkPort::open(config);
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  backend::DpdkBackendPort port(std::move(opened).value());
  transport::FrameAddress address;
  address.src_ip = *wire::Ipv4Address::parse("198.18.0.1");
  address.dst_ip = *wire::Ipv4Address::parse("198.18.0.2");
  std::vector<backend::Frame> frames(kBurst);
  uint64_t psn = 0;
  uint64_t reused = 0;
  for (int round = 0; round < 50; ++round) {
    ASSERT_TRUE(port.acquire(frames).ok());
    for (auto& f : frames) {
      if (f.payload_held != 0) ++reused;
      if (round % 10 == 9) {
        std::fill(f.data, f.data + f.capacity, 0xab);  // a writer that keeps no memo
        f.payload_held = 0;
      }
      transport::Packet p;
      p.qpn = 0x31;
      p.psn = psn++;
      p.opcode = round % 3 == 0 ? wire::Opcode::kWriteFirst : wire::Opcode::kWriteMiddle;
      p.payload_bytes = round % 5 == 0 ? 1000 : 1024;
      p.message_bytes = 1 << 20;
      transport::PayloadMemo memo{f.payload_held};
      auto len = transport::encode_frame({f.data, f.capacity}, p, address, false, &memo);
      ASSERT_TRUE(len.ok()) << len.status().to_string();
      f.payload_written = memo.written;
      f.len = static_cast<uint32_t>(*len);
      auto parsed = wire::parse_roce_frame({f.data, f.len});
      ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
      ASSERT_TRUE(parsed->icrc_ok()) << "round " << round;
      ASSERT_TRUE(std::all_of(parsed->payload.begin(), parsed->payload.end(),
                              [](uint8_t b) { return b == 0; }))
          << "round " << round;
    }
    const uint16_t taken = port.submit(frames);
    port.release(std::span<backend::Frame>(frames).subspan(taken));
  }
  EXPECT_GT(reused, 0u);  // the memo path was taken, not only the full rewrite
}

}  // namespace
}  // namespace collide::replayer::dpdk
