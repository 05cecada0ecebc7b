#include "injectors/fault_rules.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/support/status_matchers.h"

namespace collide::injectors {
namespace {

using namespace std::chrono_literals;

TEST(FaultRulesTest, Probabilities) {
  EXPECT_DOUBLE_EQ(*parse_probability("1%"), 0.01);
  EXPECT_DOUBLE_EQ(*parse_probability("0.25"), 0.25);
  EXPECT_DOUBLE_EQ(*parse_probability("1e-3"), 0.001);
  EXPECT_DOUBLE_EQ(*parse_probability("100%"), 1.0);
  EXPECT_THAT(parse_probability("101%"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_probability("-0.1"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_probability("abc"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_probability("1x"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_probability(""), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(probability_threshold(0), 0u);
  EXPECT_EQ(probability_threshold(1), uint64_t{1} << 32);
  EXPECT_EQ(probability_threshold(0.5), uint64_t{1} << 31);
}

TEST(FaultRulesTest, DurationsAndWindows) {
  EXPECT_EQ(*parse_duration("10s"), std::chrono::nanoseconds(10s));
  EXPECT_EQ(*parse_duration("200ms"), std::chrono::nanoseconds(200ms));
  EXPECT_EQ(*parse_duration("1.5s"), std::chrono::nanoseconds(1500ms));
  EXPECT_EQ(*parse_duration("500us"), std::chrono::nanoseconds(500us));
  EXPECT_EQ(*parse_duration("2m"), std::chrono::nanoseconds(120s));
  EXPECT_EQ(*parse_duration("3"), std::chrono::nanoseconds(3s));
  EXPECT_THAT(parse_duration("3 parsecs"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_duration("-1s"), StatusIs(StatusCode::kInvalidArgument));

  auto w = parse_window("2s,2.2s");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->start, std::chrono::nanoseconds(2s));
  EXPECT_EQ(w->end, std::chrono::nanoseconds(2200ms));
  w = parse_window("2s+200ms");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->end, std::chrono::nanoseconds(2200ms));
  w = parse_window("1s,");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->end.count(), 0);
  EXPECT_THAT(parse_window("2s,1s"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_window("2s"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_window("1s+0s"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(FaultRulesTest, PrefixesMapIpv4IntoIpv6) {
  auto p = parse_prefix("10.1.2.3/8");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->length, 104);
  const collide_fault_prefix e = encode_prefix(*p);
  uint8_t net[16];
  uint8_t mask[16];
  std::memcpy(net, e.net, 16);
  std::memcpy(mask, e.mask, 16);
  const uint8_t want_net[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 0};
  const uint8_t want_mask[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0};
  EXPECT_EQ(std::memcmp(net, want_net, 16), 0);
  EXPECT_EQ(std::memcmp(mask, want_mask, 16), 0);

  p = parse_prefix("fd00::1/64");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->length, 64);
  p = parse_prefix("198.18.0.2");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->length, 128);
  EXPECT_THAT(parse_prefix("10.0.0.0/33"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_prefix("10.0.0/8"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_prefix("host.example"), StatusIs(StatusCode::kInvalidArgument));
  // No prefix: an all-zero mask matches everything.
  const collide_fault_prefix any = encode_prefix(std::nullopt);
  EXPECT_EQ(any.mask[0], 0u);
  EXPECT_EQ(any.mask[1], 0u);
}

TEST(FaultRulesTest, PortsProtocolsOpcodesLists) {
  auto r = parse_port_range("1000-2000");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->lo, 1000);
  EXPECT_EQ(r->hi, 2000);
  EXPECT_EQ(parse_port_range("4791")->hi, 4791);
  EXPECT_THAT(parse_port_range("70000"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_port_range("20-10"), StatusIs(StatusCode::kInvalidArgument));

  EXPECT_EQ(*parse_protocol("udp"), 17);
  EXPECT_EQ(*parse_protocol("TCP"), 6);
  EXPECT_EQ(*parse_protocol("47"), 47);
  EXPECT_THAT(parse_protocol("sctpx"), StatusIs(StatusCode::kInvalidArgument));

  auto ops = parse_opcodes("write,0x11,0x81");
  ASSERT_TRUE(ops.ok());
  EXPECT_EQ(ops->count(), 8u);
  EXPECT_TRUE(ops->test(0x06));
  EXPECT_TRUE(ops->test(0x0b));
  EXPECT_FALSE(ops->test(0x0c));
  EXPECT_TRUE(ops->test(0x81));
  EXPECT_EQ(parse_opcodes("0-5")->count(), 6u);
  EXPECT_THAT(parse_opcodes("bogus"), StatusIs(StatusCode::kInvalidArgument));

  auto list = parse_number_list("9,1,5-7,5", 0xffffff);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (std::vector<uint32_t>{1, 5, 6, 7, 9}));
  EXPECT_THAT(parse_number_list("16777216", 0xffffff), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_number_list("0-70000", 0xffffff), StatusIs(StatusCode::kInvalidArgument));

  auto qp = parse_u24_range("10-20");
  ASSERT_TRUE(qp.ok());
  EXPECT_EQ(qp->lo, 10u);
  EXPECT_EQ(qp->hi, 20u);
}

TEST(FaultRulesTest, RatesAndSizes) {
  EXPECT_EQ(*parse_rate("8kbit"), 1000u);
  EXPECT_EQ(*parse_rate("10gbit"), 1'250'000'000u);
  EXPECT_EQ(*parse_rate("1mbps"), 1'000'000u);
  EXPECT_THAT(parse_rate("100"),
              StatusIs(StatusCode::kInvalidArgument));  // a rate needs its unit: bits or bytes is
                                                        // too easy to get wrong
  EXPECT_EQ(*parse_size("1500"), 1500u);
  EXPECT_EQ(*parse_size("64k"), 65536u);
  EXPECT_EQ(*parse_size("1MiB"), 1048576u);
  EXPECT_EQ(*parse_size("1KB"), 1000u);  // as in a scenario's YAML
  EXPECT_EQ(*parse_size("1KiB"), 1024u);
  EXPECT_THAT(parse_size("3 furlongs"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(FaultRulesTest, LossModels) {
  auto g = parse_gilbert("gilbert:p=0.01,r=0.3,h=0.1,k=0.99");
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_DOUBLE_EQ(g->p, 0.01);
  EXPECT_DOUBLE_EQ(g->r, 0.3);
  EXPECT_DOUBLE_EQ(g->h, 0.1);
  EXPECT_DOUBLE_EQ(g->k, 0.99);
  g = parse_gilbert("p=1%,r=25%");
  ASSERT_TRUE(g.ok());
  EXPECT_DOUBLE_EQ(g->h, 0);
  EXPECT_DOUBLE_EQ(g->k, 1);
  EXPECT_THAT(parse_gilbert("p=0.01"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_gilbert("p=0.01,r=0.3,q=1"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_gilbert("p=2,r=0.3"), StatusIs(StatusCode::kInvalidArgument));

  auto m = parse_markov4("p13=0.01,p31=0.5,p32=0.2,p23=0.3,p14=0.001");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_DOUBLE_EQ(m->p32, 0.2);
  EXPECT_THAT(parse_markov4("p13=0.6,p14=0.6"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(FaultRulesTest, EncodesWindowsRelativeToArming) {
  FaultRule rule;
  rule.id = 3;
  rule.decider = Decider::kBernoulli;
  rule.probability = 0.01;
  rule.window = {std::chrono::nanoseconds(2s), std::chrono::nanoseconds(2200ms)};
  rule.match.roce = true;
  rule.match.opcodes = *parse_opcodes("write");
  rule.match.dport = {4791, 4791};
  ASSERT_TRUE(validate_rule(rule).ok());
  const collide_fault_rule r = encode_rule(rule, 1'000'000'000);
  EXPECT_EQ(r.id, 3u);
  EXPECT_EQ(r.start_ns, 3'000'000'000u);
  EXPECT_EQ(r.end_ns, 3'200'000'000u);
  EXPECT_EQ(r.decider, COLLIDE_FAULT_DECIDE_BERNOULLI);
  EXPECT_EQ(r.probability, probability_threshold(0.01));
  EXPECT_TRUE(r.flags & COLLIDE_FAULT_F_ROCE);
  EXPECT_EQ(r.match.opcodes[0], 0xfc0u);  // 0x06..0x0b
  EXPECT_EQ(r.match.dport_lo, 4791);
  EXPECT_EQ(r.match.dscp_mask, ~uint64_t{0});
  EXPECT_EQ(r.match.ecn_mask, 0xf);

  FaultRule open;
  const collide_fault_rule o = encode_rule(open, 5);
  EXPECT_EQ(o.start_ns, 0u);
  EXPECT_EQ(o.end_ns, 0u);
}

TEST(FaultRulesTest, ValidationNamesTheRule) {
  FaultRule r;
  r.id = 9;
  r.decider = Decider::kEveryNth;
  auto s = validate_rule(r);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.message().find("rule 9"), std::string::npos);
  r.every_nth = 5;
  EXPECT_TRUE(validate_rule(r).ok());
  r.decider = Decider::kPsnList;
  EXPECT_THAT(validate_rule(r), StatusIs(StatusCode::kInvalidArgument));
  r.decider = Decider::kPolice;
  EXPECT_THAT(validate_rule(r), StatusIs(StatusCode::kInvalidArgument));
  r.rate_bytes_per_s = 1000;
  r.burst_bytes = 1500;
  EXPECT_TRUE(validate_rule(r).ok());
}

TEST(FaultRulesTest, PriorityOrderIsStable) {
  std::vector<FaultRule> rules(3);
  rules[0].id = 0;
  rules[0].priority = 5;
  rules[1].id = 1;
  rules[1].priority = 1;
  rules[2].id = 2;
  rules[2].priority = 5;
  const auto ordered = in_priority_order(rules);
  EXPECT_EQ(ordered[0].id, 1u);
  EXPECT_EQ(ordered[1].id, 0u);
  EXPECT_EQ(ordered[2].id, 2u);
}

TEST(FaultRulesTest, AllowlistLimits) {
  Allowlist a;
  a.tcp_ports = {22, 6443};
  a.prefixes.push_back(*parse_prefix("192.0.2.0/24"));
  auto e = encode_allowlist(a);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->tcp_port_count, 2u);
  EXPECT_EQ(e->tcp_ports[1], 6443);
  EXPECT_EQ(e->prefix_count, 1u);
  a.tcp_ports.assign(17, 1);
  EXPECT_THAT(encode_allowlist(a), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::injectors
