#include "orchestrator/testbed/qdisc_netlink.h"

#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <array>
#include <cstring>
#include <map>

#include <gtest/gtest.h>

namespace collide::orchestrator::testbed {
namespace {

// The attributes of one nesting level, by type.
int keep(const nlattr* attr, void* data) {
  (*static_cast<std::map<int, const nlattr*>*>(data))[mnl_attr_get_type(attr)] = attr;
  return MNL_CB_OK;
}

std::map<int, const nlattr*> attributes_of(const nlattr* nest) {
  std::map<int, const nlattr*> out;
  EXPECT_GE(mnl_attr_parse_nested(nest, keep, &out), 0);
  return out;
}

std::map<int, const nlattr*> top_attributes(const nlmsghdr* nlh) {
  std::map<int, const nlattr*> out;
  EXPECT_GE(mnl_attr_parse(nlh, sizeof(tcmsg), keep, &out), 0);
  return out;
}

tc_tbf_qopt qopt_of(const nlattr* parms) {
  tc_tbf_qopt q{};
  EXPECT_GE(mnl_attr_get_payload_len(parms), sizeof(q));
  std::memcpy(&q, mnl_attr_get_payload(parms), sizeof(q));
  return q;
}

// A port of one queue: its root tbf.
const PauseGate kRootGate{.handle = 0x10000, .parent = TC_H_ROOT, .shape = {}, .tos = {}};

TEST(QdiscNetlinkTest, ChangeOfTheRootTbfKeepsTheQdiscAndGivesRateBurstAndLimit) {
  std::array<char, kQdiscMessageBufferSize> buffer{};
  const TbfShape shape{.rate_bytes_per_s = 12'500'000, .burst_bytes = 3028, .limit_bytes = 1'000'000,
                       .max_frame_bytes = 1514};
  const nlmsghdr* nlh = put_tbf_change(buffer, 7, 42, kRootGate, shape);
  EXPECT_EQ(nlh->nlmsg_type, RTM_NEWQDISC);
  EXPECT_EQ(nlh->nlmsg_seq, 7u);
  // A change: neither created nor replaced, so the existing qdisc and its queue stay.
  EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  const auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(nlh));
  EXPECT_EQ(tcm->tcm_ifindex, 42);
  EXPECT_EQ(tcm->tcm_parent, TC_H_ROOT);
  EXPECT_EQ(tcm->tcm_handle, 0x10000u);

  auto top = top_attributes(nlh);
  ASSERT_TRUE(top.count(TCA_KIND) && top.count(TCA_OPTIONS));
  EXPECT_STREQ(mnl_attr_get_str(top[TCA_KIND]), "tbf");
  auto options = attributes_of(top[TCA_OPTIONS]);
  ASSERT_TRUE(options.count(TCA_TBF_PARMS) && options.count(TCA_TBF_BURST));
  EXPECT_EQ(options.count(TCA_TBF_RATE64), 0u);
  const tc_tbf_qopt q = qopt_of(options[TCA_TBF_PARMS]);
  EXPECT_EQ(q.rate.rate, 12'500'000u);
  EXPECT_EQ(q.rate.linklayer, TC_LINKLAYER_ETHERNET);
  EXPECT_EQ(q.peakrate.rate, 0u);
  EXPECT_EQ(q.limit, 1'000'000u);
  EXPECT_EQ(mnl_attr_get_u32(options[TCA_TBF_BURST]), 3028u);
}

TEST(QdiscNetlinkTest, RatesBeyond32BitsGoInRate64) {
  std::array<char, kQdiscMessageBufferSize> buffer{};
  const TbfShape shape{.rate_bytes_per_s = 50'000'000'000, .burst_bytes = 5'000'000, .limit_bytes = 1 << 30,
                       .max_frame_bytes = 9014};
  const nlmsghdr* nlh = put_tbf_change(buffer, 1, 3, kRootGate, shape);
  auto options = attributes_of(top_attributes(nlh)[TCA_OPTIONS]);
  ASSERT_EQ(options.count(TCA_TBF_RATE64), 1u);
  EXPECT_EQ(mnl_attr_get_u64(options[TCA_TBF_RATE64]), 50'000'000'000u);
  EXPECT_EQ(qopt_of(options[TCA_TBF_PARMS]).rate.rate, 0xffffffffu);
}

// A port with a queue per priority: the lossless class's tbf, addressed by its handle and parent.
TEST(QdiscNetlinkTest, ChangeOfALosslessClassGateNamesItsHandleAndParent) {
  std::array<char, kQdiscMessageBufferSize> buffer{};
  PortQueue queue;
  queue.tier = kTierLeafUp;
  queue.gbps = 0.1;
  queue.profiled = true;
  queue.buffer_bytes = 300'000;
  queue.lossless_priority = 3;
  const PauseGate gate = pause_gate(queue, 1500);
  const nlmsghdr* nlh = put_tbf_change(buffer, 2, 9, gate, held_shape(gate.shape));
  EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  const auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(nlh));
  EXPECT_EQ(tcm->tcm_handle, 0x100000u);  // 10:
  EXPECT_EQ(tcm->tcm_parent, 0x10010u);  // 1:10
  auto options = attributes_of(top_attributes(nlh)[TCA_OPTIONS]);
  EXPECT_EQ(qopt_of(options[TCA_TBF_PARMS]).rate.rate, kHeldRateBytesPerSecond);
  EXPECT_EQ(qopt_of(options[TCA_TBF_PARMS]).limit, 300'000u);
}

TEST(QdiscNetlinkTest, HeldShapeTricklesWithABurstOfOneLargestFrame) {
  const TbfShape shape{.rate_bytes_per_s = 12'500'000, .burst_bytes = 64 * 1024, .limit_bytes = 300'000,
                       .max_frame_bytes = 1514};
  const TbfShape held = held_shape(shape);
  EXPECT_EQ(held.rate_bytes_per_s, kHeldRateBytesPerSecond);
  EXPECT_EQ(held.burst_bytes, 1514u);
  EXPECT_EQ(held.limit_bytes, 300'000u);
}

TEST(QdiscNetlinkTest, DumpRequestAsksForEveryQdisc) {
  std::array<char, kQdiscMessageBufferSize> buffer{};
  const nlmsghdr* nlh = put_qdisc_dump(buffer, 9);
  EXPECT_EQ(nlh->nlmsg_type, RTM_GETQDISC);
  EXPECT_EQ(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  const auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(nlh));
  EXPECT_EQ(tcm->tcm_ifindex, 0);
}

// A qdisc as the kernel dumps it: kind and TCA_STATS2 with basic and queue stats.
nlmsghdr* put_dumped_qdisc(std::span<char> buffer, uint32_t parent, bool with_stats, bool with_pkt64,
                           uint32_t handle = 0x10000) {
  std::fill(buffer.begin(), buffer.end(), 0);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buffer.data());
  nlh->nlmsg_type = RTM_NEWQDISC;
  auto* tcm = static_cast<tcmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(tcmsg)));
  tcm->tcm_ifindex = 5;
  tcm->tcm_parent = parent;
  tcm->tcm_handle = handle;
  mnl_attr_put_strz(nlh, TCA_KIND, "tbf");
  if (with_stats) {
    nlattr* stats = mnl_attr_nest_start(nlh, TCA_STATS2);
    gnet_stats_basic basic{};
    basic.bytes = 123'456'789'012;
    basic.packets = 4321;
    mnl_attr_put(nlh, TCA_STATS_BASIC, sizeof(basic), &basic);
    gnet_stats_queue queue{.qlen = 17, .backlog = 25'000, .drops = 3, .requeues = 0, .overlimits = 99};
    mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(queue), &queue);
    if (with_pkt64) mnl_attr_put_u64(nlh, TCA_STATS_PKT64, 5'000'000'000);
    mnl_attr_nest_end(nlh, stats);
  }
  return nlh;
}

TEST(QdiscNetlinkTest, QdiscsGiveTheirCounters) {
  std::array<char, 1024> buffer{};
  auto parsed = parse_qdisc(put_dumped_qdisc(buffer, TC_H_ROOT, true, false));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  ASSERT_TRUE(parsed->has_value());
  const QdiscCounters& s = **parsed;
  EXPECT_EQ(s.ifindex, 5);
  EXPECT_EQ(s.handle, 0x10000u);
  EXPECT_EQ(s.parent, TC_H_ROOT);
  EXPECT_EQ(s.kind, "tbf");
  EXPECT_EQ(s.bytes, 123'456'789'012u);
  EXPECT_EQ(s.packets, 4321u);
  EXPECT_EQ(s.qlen, 17u);
  EXPECT_EQ(s.backlog_bytes, 25'000u);
  EXPECT_EQ(s.drops, 3u);

  auto wide = parse_qdisc(put_dumped_qdisc(buffer, TC_H_ROOT, true, true));
  ASSERT_TRUE(wide.ok() && wide->has_value());
  EXPECT_EQ((*wide)->packets, 5'000'000'000u);

  // A class's qdisc (a lossless queue's gate) gives its own.
  auto child = parse_qdisc(put_dumped_qdisc(buffer, 0x10010, true, false, 0x100000));
  ASSERT_TRUE(child.ok() && child->has_value());
  EXPECT_EQ((*child)->handle, 0x100000u);
  EXPECT_EQ((*child)->parent, 0x10010u);
  EXPECT_EQ((*child)->backlog_bytes, 25'000u);
}

TEST(QdiscNetlinkTest, IngressQdiscsAreLeftOutAndMissingStatsAreAnError) {
  std::array<char, 1024> buffer{};
  auto ingress = parse_qdisc(put_dumped_qdisc(buffer, TC_H_INGRESS, true, false, 0xFFFF0000));
  ASSERT_TRUE(ingress.ok());
  EXPECT_FALSE(ingress->has_value());

  auto bare = parse_qdisc(put_dumped_qdisc(buffer, TC_H_ROOT, false, false));
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("TCA_STATS2"), std::string::npos) << bare.status().to_string();
}

}  // namespace
}  // namespace collide::orchestrator::testbed
