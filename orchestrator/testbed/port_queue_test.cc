#include "orchestrator/testbed/port_queue.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "orchestrator/testbed/testbed_plan.h"
#include "tests/support/leaf_spine_spec.h"

namespace collide::orchestrator::testbed {
namespace {

v1::VirtualTestbedSpec two_tier() {
  v1::VirtualTestbedSpec s = testing::leaf_spine_spec("tb", 4, 2, 1);
  s.set_host_link_gbps(10);
  s.set_fabric_link_gbps(20);
  return s;
}

std::string joined(const std::vector<std::string>& argv) { return fmt::format("{}", fmt::join(argv, " ")); }

const LinkEnd* end_named(const TestbedPlan& plan, const std::string& netns, const std::string& ifname) {
  for (const PlannedLink& l : plan.links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      if (e->netns == netns && e->ifname == ifname) return e;
    }
  }
  return nullptr;
}

TEST(PortQueueTest, WithoutProfilesEveryPortKeepsThePlainShaper) {
  auto plan = plan_testbed(two_tier());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const LinkEnd* leaf_port = end_named(*plan, "tb-leaf0", "p0");
  ASSERT_NE(leaf_port, nullptr);
  EXPECT_EQ(leaf_port->queue.tier, kTierLeafDown);
  EXPECT_FALSE(leaf_port->queue.profiled);
  auto cmds = port_qdisc_commands(leaf_port->netns, leaf_port->ifname, leaf_port->queue, 1500);
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_EQ(joined(cmds[0]),
            "tc -n tb-leaf0 qdisc replace dev p0 root handle 1: tbf rate 10000000kbit burst 1250000 "
            "limit 26250000");
  v1::VirtualTestbedSpec unshaped = two_tier();
  unshaped.set_host_link_gbps(0);
  unshaped.set_fabric_link_gbps(0);
  auto flat = plan_testbed(unshaped);
  ASSERT_TRUE(flat.ok());
  const LinkEnd* nic = end_named(*flat, "tb-h0", "eth0");
  ASSERT_NE(nic, nullptr);
  EXPECT_TRUE(port_qdisc_commands(nic->netns, nic->ifname, nic->queue, 1500).empty());
  // Unshaped, a leaf's port towards a host still queues (frames wait when the host's ring is
  // full) and its uplinks do not.
  const LinkEnd* flat_leaf_port = end_named(*flat, "tb-leaf0", "p0");
  ASSERT_NE(flat_leaf_port, nullptr);
  auto queue = port_qdisc_commands(flat_leaf_port->netns, flat_leaf_port->ifname, flat_leaf_port->queue, 1500);
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_EQ(joined(queue[0]), "tc -n tb-leaf0 qdisc replace dev p0 root handle 1: pfifo limit 1024");
  for (const PlannedLink& l : flat->links) {
    if (l.a.queue.tier == kTierLeafUp) {
      EXPECT_TRUE(port_qdisc_commands(l.a.netns, l.a.ifname, l.a.queue, 1500).empty()) << l.a.ifname;
    }
  }
}

TEST(PortQueueTest, EachTierGetsItsProfileAsQdiscs) {
  v1::VirtualTestbedSpec s = two_tier();
  s.mutable_leaf_down()->set_buffer_bytes(500000);  // rate from host_link_gbps
  v1::PortProfile& up = *s.mutable_leaf_up();
  up.set_gbps(5);  // oversubscribed: two 10G hosts under a 5G uplink
  up.set_buffer_bytes(1000000);
  up.mutable_ecn()->set_kmin_bytes(30000);
  up.mutable_ecn()->set_kmax_bytes(300000);
  up.mutable_ecn()->set_pmax(0.25);
  auto plan = plan_testbed(s);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();

  const LinkEnd* down = end_named(*plan, "tb-leaf0", "p0");
  ASSERT_NE(down, nullptr);
  auto cmds = port_qdisc_commands(down->netns, down->ifname, down->queue, 1500);
  ASSERT_EQ(cmds.size(), 1u);  // no marking: tbf's own bfifo is the buffer
  EXPECT_EQ(joined(cmds[0]),
            "tc -n tb-leaf0 qdisc replace dev p0 root handle 1: tbf rate 10000000kbit burst 125000 "
            "limit 500000");

  const LinkEnd* uplink = end_named(*plan, "tb-leaf0", "p2");  // after the leaf's two host ports
  ASSERT_NE(uplink, nullptr);
  EXPECT_EQ(uplink->queue.tier, kTierLeafUp);
  cmds = port_qdisc_commands(uplink->netns, uplink->ifname, uplink->queue, 1500);
  ASSERT_EQ(cmds.size(), 1u);  // marking is the egress program's, in front of this queue
  EXPECT_EQ(joined(cmds[0]),
            "tc -n tb-leaf0 qdisc replace dev p2 root handle 1: tbf rate 5000000kbit burst 62500 "
            "limit 1000000");
  EXPECT_TRUE(uplink->queue.ecn);
  EXPECT_EQ(uplink->queue.kmin_bytes, 30000u);
  EXPECT_EQ(uplink->queue.kmax_bytes, 300000u);
  EXPECT_DOUBLE_EQ(uplink->queue.pmax, 0.25);
  EXPECT_EQ(shaper_burst_bytes(uplink->queue, 1500), 62500u);
  EXPECT_FALSE(down->queue.ecn);

  // The spine's ports have no profile: the plain shaper at fabric_link_gbps; host NICs likewise.
  const LinkEnd* spine = end_named(*plan, "tb-spine0", "p0");
  ASSERT_NE(spine, nullptr);
  EXPECT_EQ(spine->queue.tier, kTierSpineDown);
  EXPECT_FALSE(spine->queue.profiled);
  EXPECT_DOUBLE_EQ(spine->queue.gbps, 20);
  const LinkEnd* nic = end_named(*plan, "tb-h0", "eth0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->queue.tier, kTierHostNic);
  EXPECT_FALSE(nic->queue.profiled);
}

TEST(PortQueueTest, SlowProfilesStillBurstTwoFrames) {
  v1::PortProfile p;
  p.set_gbps(0.01);  // 100 us at 10 Mbit/s is 125 bytes, less than a frame
  const PortQueue q = port_queue(kTierSpineDown, &p, 0);
  EXPECT_EQ(q.buffer_bytes, 25000u);  // 20 ms at the rate
  auto cmds = port_qdisc_commands("n", "p0", q, 9000);
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_NE(joined(cmds[0]).find("burst 18028 limit 25000"), std::string::npos) << joined(cmds[0]);
}

TEST(PortQueueTest, FaultyProfilesNameTheirField) {
  auto fault = [](void (*edit)(v1::VirtualTestbedSpec&)) {
    v1::VirtualTestbedSpec s = two_tier();
    edit(s);
    auto e = check_port_profiles(s);
    const std::string from_validate = validate(s).message();
    return e ? e->field + ": " + e->what + " | " + from_validate : std::string("ok | ") + from_validate;
  };
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { s.mutable_leaf_up()->set_buffer_bytes(1000); }), "ok | ");
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) {
              s.set_fabric_link_gbps(0);
              s.mutable_spine_down()->set_buffer_bytes(1000);
            }),
            "spine_down.gbps: a port profile needs a rate: set it here or set fabric_link_gbps | "
            "spine_down.gbps: a port profile needs a rate: set it here or set fabric_link_gbps");
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { s.mutable_leaf_down()->set_gbps(-1); }).substr(0, 30),
            "leaf_down.gbps: negative rate ");
  auto ecn = [](v1::VirtualTestbedSpec& s) -> v1::EcnMarking& {
    v1::PortProfile& p = *s.mutable_leaf_down();
    p.set_buffer_bytes(100000);
    v1::EcnMarking& e = *p.mutable_ecn();
    e.set_kmin_bytes(10000);
    e.set_kmax_bytes(50000);
    e.set_pmax(1);
    return e;
  };
  static auto ecn_fn = ecn;
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { ecn_fn(s); }), "ok | ");
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { ecn_fn(s).set_kmin_bytes(60000); }).substr(0, 54),
            "leaf_down.ecn.kmin_bytes: kmin 60000 is above kmax 500");
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { ecn_fn(s).set_kmax_bytes(100001); }).substr(0, 70),
            "leaf_down.ecn.kmax_bytes: kmax 100001 is beyond the buffer (100000 byt");
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { ecn_fn(s).set_kmax_bytes(0); }).substr(0, 55),
            "leaf_down.ecn.kmax_bytes: ECN marking needs kmax_bytes ");
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { ecn_fn(s).set_pmax(0); }).substr(0, 40),
            "leaf_down.ecn.pmax: 0 is not in (0, 1] |");
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { ecn_fn(s).set_pmax(1.5); }).substr(0, 42),
            "leaf_down.ecn.pmax: 1.5 is not in (0, 1] |");
  // Kmin == Kmax is step marking (DCTCP's K): allowed.
  EXPECT_EQ(fault([](v1::VirtualTestbedSpec& s) { ecn_fn(s).set_kmin_bytes(50000); }), "ok | ");
}

// The numbers tc is given, read back from a tbf command line: rate (kbit), burst, limit.
struct TbfWords {
  std::string rate, burst, limit;
};
TbfWords tbf_words(const std::vector<std::string>& argv) {
  TbfWords w;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "rate") w.rate = argv[i + 1];
    if (argv[i] == "burst") w.burst = argv[i + 1];
    if (argv[i] == "limit") w.limit = argv[i + 1];
  }
  return w;
}

TEST(PortQueueTest, TbfShapeIsWhatTheCommandsSet) {
  const v1::PortProfile* no_profile = nullptr;
  v1::PortProfile profile;
  profile.set_gbps(0.1);
  profile.set_buffer_bytes(300'000);
  for (const PortQueue& q : {port_queue(kTierLeafUp, no_profile, 10), port_queue(kTierLeafUp, &profile, 20)}) {
    SCOPED_TRACE(q.profiled ? "profiled" : "plain");
    const auto cmds = port_qdisc_commands("tb-leaf0", "p2", q, 1500);
    ASSERT_EQ(cmds.size(), 1u);
    const TbfWords words = tbf_words(cmds[0]);
    const TbfShape shape = tbf_shape(q, 1500);
    EXPECT_EQ(words.rate, fmt::format("{}kbit", shape.rate_bytes_per_s * 8 / 1000));
    EXPECT_EQ(shape.rate_bytes_per_s * 8 % 1000, 0u);
    EXPECT_EQ(words.burst, std::to_string(shape.burst_bytes));
    EXPECT_EQ(words.limit, std::to_string(shape.limit_bytes));
    EXPECT_EQ(shape.max_frame_bytes, 1514u);
  }
  // Known numbers: 10 Gbit/s plain (1.25 MB/ms burst, 20 ms and the burst of queue) and the
  // 100 Mbit/s profile (two frames of burst, its own buffer).
  const TbfShape plain = tbf_shape(port_queue(kTierLeafUp, no_profile, 10), 1500);
  EXPECT_EQ(plain.rate_bytes_per_s, 1'250'000'000u);
  EXPECT_EQ(plain.burst_bytes, 1'250'000u);
  EXPECT_EQ(plain.limit_bytes, 26'250'000u);
  const TbfShape profiled = tbf_shape(port_queue(kTierLeafUp, &profile, 20), 1500);
  EXPECT_EQ(profiled.rate_bytes_per_s, 12'500'000u);
  EXPECT_EQ(profiled.burst_bytes, 3028u);
  EXPECT_EQ(profiled.limit_bytes, 300'000u);
}

// With PFC settings and a lossy queue every shaped switch port gets a queue for the lossless
// priority apart, and its gate is the tbf the commands put there; a host's NIC keeps none (it
// holds nothing). Without the lossy queue a port keeps its one queue.
TEST(PortQueueTest, PfcSettingsWithALossyQueueGiveSwitchPortsAQueuePerPriority) {
  v1::VirtualTestbedSpec spec = two_tier();
  spec.mutable_pfc()->set_priority(4);
  auto one_queue = plan_testbed(spec);
  ASSERT_TRUE(one_queue.ok()) << one_queue.status().to_string();
  for (const PlannedLink& l : one_queue->links) {
    EXPECT_FALSE(l.a.queue.lossless_priority.has_value() || l.b.queue.lossless_priority.has_value());
  }
  spec.mutable_pfc()->set_lossy_queue(true);
  auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  for (const PlannedLink& l : plan->links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      SCOPED_TRACE(e->netns + "/" + e->ifname);
      if (e->queue.tier == kTierHostNic) {
        EXPECT_FALSE(e->queue.lossless_priority.has_value());
      } else {
        ASSERT_TRUE(e->queue.lossless_priority.has_value());
        EXPECT_EQ(*e->queue.lossless_priority, 4u);
      }
    }
  }
  const LinkEnd* up = end_named(*plan, "tb-leaf0", "p2");
  ASSERT_NE(up, nullptr);
  const auto cmds = port_qdisc_commands(up->netns, up->ifname, up->queue, 1500);
  ASSERT_EQ(cmds.size(), 7u);
  EXPECT_EQ(joined(cmds[0]), "tc -n tb-leaf0 qdisc replace dev p2 root handle 1: htb default 20");
  // The line rate caps both classes; each is sure of half and borrows the rest, lossless first.
  EXPECT_EQ(joined(cmds[1]), "tc -n tb-leaf0 class replace dev p2 parent 1: classid 1:1 htb rate 20000000kbit "
                             "ceil 20000000kbit burst 2500000 cburst 2500000 quantum 1514");
  EXPECT_EQ(joined(cmds[2]), "tc -n tb-leaf0 class replace dev p2 parent 1:1 classid 1:10 htb rate 10000000kbit "
                             "ceil 20000000kbit burst 2500000 cburst 2500000 quantum 1514 prio 0");
  EXPECT_EQ(joined(cmds[3]), "tc -n tb-leaf0 class replace dev p2 parent 1:1 classid 1:20 htb rate 10000000kbit "
                             "ceil 20000000kbit burst 2500000 cburst 2500000 quantum 1514 prio 1");
  const PauseGate gate = pause_gate(up->queue, 1500);
  EXPECT_EQ(gate.handle, 0x100000u);
  EXPECT_EQ(gate.parent, 0x10010u);
  EXPECT_EQ(joined(cmds[4]), fmt::format("tc -n tb-leaf0 qdisc replace dev p2 parent 1:10 handle 10: tbf rate "
                                         "{}kbit burst {} limit {}",
                                         gate.shape.rate_bytes_per_s * 8 / 1000, gate.shape.burst_bytes,
                                         gate.shape.limit_bytes));
  EXPECT_EQ(joined(cmds[5]), fmt::format("tc -n tb-leaf0 qdisc replace dev p2 parent 1:20 handle 20: bfifo limit {}",
                                         gate.shape.limit_bytes));
  // Priority 4 is DSCP 32-39: TOS 0x80-0x9f.
  EXPECT_EQ(joined(cmds[6]), "tc -n tb-leaf0 filter add dev p2 parent 1: protocol ip prio 1 u32 match ip tos "
                             "0x80 0xe0 flowid 1:10");
  EXPECT_EQ(gate.tos.mask, 0xe0);
  EXPECT_EQ(gate.tos.value, 0x80);
  // Without PFC settings the port keeps its one queue, and a pause would hold its root.
  auto plain = plan_testbed(two_tier());
  ASSERT_TRUE(plain.ok());
  const LinkEnd* plain_up = end_named(*plain, "tb-leaf0", "p2");
  ASSERT_NE(plain_up, nullptr);
  EXPECT_EQ(port_qdisc_commands(plain_up->netns, plain_up->ifname, plain_up->queue, 1500).size(), 1u);
  const PauseGate root = pause_gate(plain_up->queue, 1500);
  EXPECT_EQ(root.handle, 0x10000u);
  EXPECT_EQ(root.parent, 0xFFFFFFFFu);
  EXPECT_EQ(root.tos.mask, 0);
}

TEST(PortQueueTest, DscpMapsToPriorityByItsTopThreeBits) {
  EXPECT_EQ(priority_of_dscp(26), 3u);
  EXPECT_EQ(priority_of_dscp(24), 3u);
  EXPECT_EQ(priority_of_dscp(31), 3u);
  EXPECT_EQ(priority_of_dscp(46), 5u);
  EXPECT_EQ(priority_of_dscp(0), 0u);
  for (uint32_t dscp = 0; dscp < 64; ++dscp) {
    const TosMatch m = priority_tos(priority_of_dscp(dscp));
    for (uint8_t ecn = 0; ecn < 4; ++ecn) {
      EXPECT_EQ((static_cast<uint8_t>(dscp << 2 | ecn) & m.mask), m.value) << dscp;
    }
  }
}

}  // namespace
}  // namespace collide::orchestrator::testbed
