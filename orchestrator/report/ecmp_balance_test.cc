#include "orchestrator/report/ecmp_balance.h"

#include <gtest/gtest.h>

#include "orchestrator/report/html_report.h"
#include "orchestrator/report/report.h"
#include "orchestrator/report/text_summary.h"

namespace collide::orchestrator::report {
namespace {

FabricLink fabric_link(uint32_t leaf, uint32_t spine, uint64_t up, uint64_t down) {
  FabricLink l;
  l.name = "leaf" + std::to_string(leaf) + "-spine" + std::to_string(spine);
  l.leaf = leaf;
  l.spine = spine;
  l.lower_end.tx_bytes = up;
  l.upper_end.tx_bytes = down;
  return l;
}

TEST(EcmpBalanceTest, EvenLinksScoreOneAndOneBusyLinkScoresN) {
  const LinkBalance even = balance_of({100, 100, 100, 100});
  EXPECT_EQ(even.links, 4u);
  EXPECT_DOUBLE_EQ(even.max_mean, 1.0);
  EXPECT_DOUBLE_EQ(even.jain, 1.0);
  const LinkBalance one = balance_of({400, 0, 0, 0});
  EXPECT_DOUBLE_EQ(one.max_mean, 4.0);
  EXPECT_DOUBLE_EQ(one.jain, 0.25);
  // 3:1 over two links: max/mean 1.5, Jain 16 / (2 x 10) = 0.8.
  const LinkBalance skewed = balance_of({300, 100});
  EXPECT_DOUBLE_EQ(skewed.max_mean, 1.5);
  EXPECT_DOUBLE_EQ(skewed.jain, 0.8);
  EXPECT_EQ(skewed.max_bytes, 300u);
  EXPECT_DOUBLE_EQ(skewed.mean_bytes, 200.0);
}

FabricLink spine_link(uint32_t spine, uint32_t pod, uint32_t super, uint64_t up, uint64_t down) {
  FabricLink l;
  l.name = "spine" + std::to_string(spine) + "-super" + std::to_string(super);
  l.spine_link = true;
  l.spine = spine;
  l.pod = pod;
  l.super_spine = super;
  l.lower_end.tx_bytes = up;
  l.upper_end.tx_bytes = down;
  return l;
}

TEST(EcmpBalanceTest, ThreeTiersScoreTheSpinesUplinksAndTheSuperSpinesDownlinksApart) {
  // Leaf 0 up to spines 0 and 1 evenly; spine 0 sends all of it to super-spine 0 (a collision),
  // spine 1 splits; into pod 1 the super-spines send evenly over spines 2 and 3.
  const EcmpBalance b = ecmp_balance({fabric_link(0, 0, 100, 0), fabric_link(0, 1, 100, 0),
                                      spine_link(0, 0, 0, 100, 0), spine_link(0, 0, 1, 0, 0),
                                      spine_link(1, 0, 0, 50, 0), spine_link(1, 0, 1, 50, 0),
                                      spine_link(2, 1, 0, 0, 50), spine_link(2, 1, 1, 0, 50),
                                      spine_link(3, 1, 0, 0, 50), spine_link(3, 1, 1, 0, 50)});
  EXPECT_EQ(b.leaf_uplinks.links, 2u);
  EXPECT_DOUBLE_EQ(b.leaf_uplinks.max_mean, 1.0);
  EXPECT_EQ(b.spine_uplinks.links, 4u);  // spines 2 and 3 sent nothing up: not a group
  EXPECT_DOUBLE_EQ(b.spine_uplinks.max_mean, 2.0);
  EXPECT_EQ(b.super_downlinks.links, 4u);  // into pod 1; pod 0 received nothing
  EXPECT_DOUBLE_EQ(b.super_downlinks.max_mean, 1.0);
  EXPECT_FALSE(b.empty());
  // A 2-tier fabric has no upper tier.
  EXPECT_EQ(ecmp_balance({fabric_link(0, 0, 100, 0)}).spine_uplinks.links, 0u);
}

TEST(EcmpBalanceTest, NothingCarriedIsNoScore) {
  EXPECT_EQ(balance_of({}).links, 0u);
  const LinkBalance idle = balance_of({0, 0});
  EXPECT_EQ(idle.links, 0u);
  EXPECT_EQ(idle.max_mean, 0.0);
  EXPECT_TRUE(ecmp_balance({}).empty());
}

TEST(EcmpBalanceTest, TwoElephantsOnOneUplinkOfOneLeaf) {
  // Leaf 0 sent both of its flows up spine 0; leaf 1 spread its two. The spines delivered what
  // they got: spine 0 carries three flows' bytes, one of them towards leaf 0.
  const std::vector<FabricLink> links = {
      fabric_link(0, 0, 2000, 1000), fabric_link(0, 1, 10, 10),
      fabric_link(1, 0, 1000, 2000), fabric_link(1, 1, 1000, 10)};
  FabricLink host;
  host.host_link = true;
  host.lower_end.tx_bytes = 1'000'000;  // host links are no ECMP group
  std::vector<FabricLink> with_host = links;
  with_host.push_back(host);
  const EcmpBalance b = ecmp_balance(with_host);
  EXPECT_EQ(b.leaf_uplinks.links, 4u);
  EXPECT_NEAR(b.leaf_uplinks.max_mean, 2000.0 / (4010.0 / 4), 1e-9);
  EXPECT_EQ(b.spine_downlinks.links, 4u);
  EXPECT_EQ(b.spine_downlinks.max_bytes, 2000u);
  EXPECT_LT(b.leaf_uplinks.jain, 0.75);
}

TEST(EcmpBalanceTest, ALeafWithoutInterLeafTrafficIsLeftOut) {
  // Leaf 1 only saw ARP on its uplinks: its links are not idle paths of a busy group.
  const EcmpBalance b = ecmp_balance({fabric_link(0, 0, 5000, 3), fabric_link(0, 1, 5000, 3),
                                      fabric_link(1, 0, 3, 5000), fabric_link(1, 1, 3, 5000)});
  EXPECT_EQ(b.leaf_uplinks.links, 2u);
  EXPECT_DOUBLE_EQ(b.leaf_uplinks.max_mean, 1.0);
  EXPECT_DOUBLE_EQ(b.leaf_uplinks.jain, 1.0);
  EXPECT_EQ(b.spine_downlinks.links, 2u);
  EXPECT_DOUBLE_EQ(b.spine_downlinks.max_mean, 1.0);
}

TEST(EcmpBalanceTest, AVariantAveragesItsRepetitions) {
  EcmpBalance collided, even, idle;
  collided.leaf_uplinks = balance_of({200, 0});
  even.leaf_uplinks = balance_of({100, 100});
  EcmpMean mean;
  for (const EcmpBalance& run : {collided, even, idle}) mean.add(run);
  const EcmpBalance m = mean.mean();
  EXPECT_DOUBLE_EQ(m.leaf_uplinks.max_mean, 1.5);
  EXPECT_DOUBLE_EQ(m.leaf_uplinks.jain, 0.75);
  EXPECT_EQ(m.spine_downlinks.links, 0u);
}

// A run of one all-reduce that took `us` microseconds over `links`.
RunResult run_over(const std::string& variant, uint32_t rep, double us, std::vector<FabricLink> links) {
  RunResult r;
  r.variant = variant;
  r.repetition = rep;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    OpTiming op;
    op.rank = rank;
    op.kind = v1::OP_KIND_ALL_REDUCE;
    op.comm = "world";
    op.comm_size = 2;
    op.bytes = 1'000'000;
    op.start_ns = 1'000'000;
    op.end_ns = 1'000'000 + static_cast<uint64_t>(us * 1000);
    r.ops.push_back(op);
  }
  r.fabric_links = std::move(links);
  return r;
}

TEST(EcmpBalanceTest, ReportCarriesItPerRepetitionAndVariantInJsonTextAndHtml) {
  const std::vector<RunResult> runs = {
      run_over("one-qp", 0, 200, {fabric_link(0, 0, 2000, 2000), fabric_link(0, 1, 0, 0)}),
      run_over("one-qp", 1, 100, {fabric_link(0, 0, 1000, 1000), fabric_link(0, 1, 1000, 1000)}),
      run_over("spray", 0, 100, {fabric_link(0, 0, 1000, 1000), fabric_link(0, 1, 1000, 1000)})};
  const Report rep = build_report("unit", runs);
  EXPECT_DOUBLE_EQ(rep.variants[0].repetitions[0].ecmp.leaf_uplinks.max_mean, 2.0);
  EXPECT_DOUBLE_EQ(rep.variants[0].ecmp.leaf_uplinks.max_mean, 1.5);
  EXPECT_DOUBLE_EQ(rep.variants[0].ecmp.spine_downlinks.jain, 0.75);
  EXPECT_DOUBLE_EQ(rep.variants[1].ecmp.leaf_uplinks.jain, 1.0);

  const nlohmann::json j = report_json(rep);
  EXPECT_EQ(j["variants"][0]["ecmp"]["leaf_uplinks"]["ecmp_max_mean"], 1.5);
  EXPECT_EQ(j["variants"][0]["ecmp"]["leaf_uplinks"]["links"], 2);
  EXPECT_EQ(j["variants"][0]["repetitions"][0]["ecmp"]["spine_downlinks"]["ecmp_max_mean"], 2.0);
  EXPECT_EQ(j["variants"][1]["ecmp"]["spine_downlinks"]["jain"], 1.0);

  const std::string text = run_summary(rep, "", "");
  EXPECT_NE(text.find("ECMP balance"), std::string::npos) << text;
  EXPECT_NE(text.find("   1.500  0.750     2    1.500  0.750     2"), std::string::npos) << text;
  const std::string html = render_html(rep, runs);
  EXPECT_NE(html.find("<pre id=\"ecmp\">"), std::string::npos);
}

TEST(EcmpBalanceTest, NoFabricNoTable) {
  EXPECT_EQ(run_summary(build_report("unit", {run_over("real", 0, 100, {})}), "", "").find("ECMP"),
            std::string::npos);
}

}  // namespace
}  // namespace collide::orchestrator::report
