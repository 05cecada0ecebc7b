#include "orchestrator/run/roofline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/leaf_spine_spec.h"
#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

namespace coll = replayer::collectives;

constexpr uint64_t kBytes = 8ull << 20;  // each all-reduce's size S

// Four hosts, one rank and NIC each, host h under leaf h % 2, two spines.
v1::VirtualTestbedSpec four_hosts(double host_gbps, double fabric_gbps) {
  v1::VirtualTestbedSpec spec = testing::leaf_spine_spec("roof", 4, 2, 2);
  spec.set_host_link_gbps(host_gbps);
  spec.set_fabric_link_gbps(fabric_gbps);
  return spec;
}

class RooflineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = (std::filesystem::temp_directory_path() / ("collide_roofline_" + std::to_string(getpid()) + ".trace"))
                 .string();
    v1::TraceHeader header;
    header.set_world_size(4);
    v1::Communicator* world = header.add_communicators();
    world->set_id("world");
    for (uint32_t r = 0; r < 4; ++r) world->add_ranks(r);
    auto writer = traces::TraceWriter::create(trace_, header);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    for (uint32_t rank = 0; rank < 4; ++rank) {
      for (uint64_t index = 0; index < 2; ++index) {
        v1::Op op;
        op.set_rank(rank);
        op.set_index(index);
        op.set_kind(v1::OP_KIND_ALL_REDUCE);
        op.set_comm("world");
        op.set_datatype(v1::DATA_TYPE_FLOAT32);
        op.set_bytes(kBytes);
        ASSERT_TRUE((*writer)->write(op).ok());
      }
    }
    ASSERT_TRUE((*writer)->close().ok());
    auto placement = coll::Placement::uniform(4, 1, 1);
    ASSERT_TRUE(placement.ok());
    placement_ = *placement;
    placement_.leaf_of_host = {0, 1, 0, 1};
  }
  void TearDown() override { std::filesystem::remove(trace_); }

  FabricLoad load(const v1::VirtualTestbedSpec& spec, v1::TransportSettings::RingOrder order) {
    auto plan = testbed::plan_testbed(spec);
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    v1::TransportSettings transport;
    transport.set_ring_order(order);
    auto loaded = fabric_load(trace_, placement_, transport, nic_places(*plan));
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    return loaded.ok() ? *loaded : FabricLoad{};
  }

  std::string trace_;
  coll::Placement placement_;
};

// A ring all-reduce sends 2(n-1)/n S from every rank; two of them per job here.
constexpr uint64_t kPerRank = 2 * (2 * 3 * kBytes / 4);

TEST_F(RooflineTest, RankOrderCrossesTheLeavesOnEveryHopAndTheUplinksBound) {
  const v1::VirtualTestbedSpec spec = four_hosts(10, 5);
  const FabricLoad l = load(spec, v1::TransportSettings::RING_ORDER_RANK);
  for (uint32_t h = 0; h < 4; ++h) {
    EXPECT_EQ(l.nic_sent.at({h, 0}), kPerRank) << h;
    EXPECT_EQ(l.nic_received.at({h, 0}), kPerRank) << h;
  }
  // Ring 0-1-2-3: every neighbour sits under the other leaf.
  EXPECT_EQ(l.leaf_up.at(0), 2 * kPerRank);
  EXPECT_EQ(l.leaf_down.at(1), 2 * kPerRank);

  const report::Roofline r = roofline(l, *testbed::plan_testbed(spec));
  EXPECT_EQ(r.bottleneck, "leaf0 uplinks");
  EXPECT_EQ(r.bottleneck_bytes, 2 * kPerRank);
  EXPECT_DOUBLE_EQ(r.bottleneck_gbps, 10);  // two 5 Gb/s uplinks
  EXPECT_DOUBLE_EQ(r.seconds, 2.0 * kPerRank * 8 / 10e9);
}

TEST_F(RooflineTest, TopologyOrderHalvesWhatClimbsAndTheNicsBound) {
  const v1::VirtualTestbedSpec spec = four_hosts(10, 5);
  const FabricLoad l = load(spec, v1::TransportSettings::RING_ORDER_TOPOLOGY);
  EXPECT_EQ(l.leaf_up.at(0), kPerRank);  // one hop of the ring leaves each leaf
  EXPECT_EQ(l.leaf_down.at(0), kPerRank);
  const report::Roofline r = roofline(l, *testbed::plan_testbed(spec));
  EXPECT_DOUBLE_EQ(r.seconds, 1.0 * kPerRank * 8 / 10e9);
}

TEST_F(RooflineTest, TheSlowestShapedPortBoundsAndUnshapedPortsBoundNothing) {
  const FabricLoad l = load(four_hosts(10, 0), v1::TransportSettings::RING_ORDER_RANK);
  const report::Roofline hosts_only = roofline(l, *testbed::plan_testbed(four_hosts(10, 0)));
  EXPECT_EQ(hosts_only.bottleneck, "h0.nic0 send");
  EXPECT_DOUBLE_EQ(hosts_only.seconds, 1.0 * kPerRank * 8 / 10e9);

  v1::VirtualTestbedSpec slow_port = four_hosts(10, 0);
  slow_port.mutable_leaf_down()->set_gbps(2);  // leaf ports towards the hosts
  const report::Roofline r = roofline(l, *testbed::plan_testbed(slow_port));
  EXPECT_EQ(r.bottleneck, "h0.nic0 receive");
  EXPECT_DOUBLE_EQ(r.seconds, 1.0 * kPerRank * 8 / 2e9);

  const report::Roofline unknown = roofline(l, *testbed::plan_testbed(four_hosts(0, 0)));
  EXPECT_FALSE(unknown.known());
  EXPECT_EQ(unknown.bottleneck, "");
}

TEST_F(RooflineTest, BetweenPodsTheSpinesUplinksBound) {
  // Host h under leaf h, leaves 0-1 in pod 0 and 2-3 in pod 1, one spine per pod, one super-spine.
  v1::VirtualTestbedSpec spec = four_hosts(10, 10);
  spec.set_leaves(4);
  spec.set_pods(2);
  spec.set_super_spines(1);
  spec.set_super_link_gbps(2);
  const FabricLoad l = load(spec, v1::TransportSettings::RING_ORDER_RANK);
  // Ring 0-1-2-3: h1 -> h2 and h3 -> h0 cross the pods.
  EXPECT_EQ(l.pod_up.at(0), kPerRank);
  EXPECT_EQ(l.pod_down.at(1), kPerRank);
  EXPECT_EQ(l.leaf_up.at(0), kPerRank);
  const report::Roofline r = roofline(l, *testbed::plan_testbed(spec));
  EXPECT_EQ(r.bottleneck, "pod0 spine uplinks");
  EXPECT_DOUBLE_EQ(r.seconds, 1.0 * kPerRank * 8 / 2e9);
}

TEST_F(RooflineTest, ANicCabledToNoLeafIsNamed) {
  auto loaded = fabric_load(trace_, placement_, v1::TransportSettings{}, NicPlaces{{{{0, 0}, 0}}, {}});
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("is cabled to no leaf"), std::string::npos)
      << loaded.status().message();
}

}  // namespace
}  // namespace collide::orchestrator
