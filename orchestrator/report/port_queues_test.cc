#include "orchestrator/report/port_queues.h"

#include <gtest/gtest.h>

#include "orchestrator/report/html_report.h"
#include "orchestrator/report/report.h"
#include "orchestrator/report/text_summary.h"

namespace collide::orchestrator::report {
namespace {

PortStats port(const std::string& link, const std::string& end, const std::string& tier, uint64_t packets,
               uint64_t drops, uint64_t marks, uint64_t p95, uint64_t max, std::vector<double> util) {
  PortStats p;
  p.link = link;
  p.end = end;
  p.tier = tier;
  p.gbps = 1;
  p.bytes = packets * 1000;
  p.packets = packets;
  p.drops = drops;
  p.ecn_marks = marks;
  p.depth_p95_bytes = p95;
  p.depth_max_bytes = max;
  p.samples = 10;
  p.bin_seconds = 0.01;
  p.utilization = std::move(util);
  return p;
}

TEST(PortQueuesTest, VariantMergesRepetitionsAndTiersInReportJsonTextAndHtml) {
  RunResult a;
  a.variant = "baseline";
  a.ports = {port("h0.nic0-leaf0", "leaf0", "leaf_down", 1000, 0, 100, 30000, 50000, {0.5, 1.0}),
             port("leaf0-spine0", "leaf0", "leaf_up", 10, 0, 0, 0, 1514, {0.0, 0.1})};
  RunResult b = a;
  b.repetition = 1;
  b.ports = {port("h0.nic0-leaf0", "leaf0", "leaf_down", 2996, 4, 300, 40000, 45000, {1.0, 0.0}),
             port("h1.nic0-leaf0", "leaf0", "leaf_down", 996, 0, 0, 1000, 2000, {0.2, 0.2})};
  const Report rep = build_report("unit", {a, b});
  const std::vector<PortStats>& ports = rep.variants[0].ports;
  ASSERT_EQ(ports.size(), 3u);
  const PortStats& hot = ports[0];
  EXPECT_EQ(hot.link, "h0.nic0-leaf0");
  EXPECT_EQ(hot.packets, 3996u);
  EXPECT_EQ(hot.drops, 4u);
  EXPECT_EQ(hot.ecn_marks, 400u);
  EXPECT_EQ(hot.depth_p95_bytes, 40000u);  // the worse repetition
  EXPECT_EQ(hot.depth_max_bytes, 50000u);
  ASSERT_EQ(hot.utilization.size(), 2u);
  EXPECT_DOUBLE_EQ(hot.utilization[0], 0.75);
  EXPECT_DOUBLE_EQ(hot.utilization[1], 0.5);
  EXPECT_DOUBLE_EQ(ecn_mark_ratio(hot), 400.0 / 3996);
  EXPECT_DOUBLE_EQ(drops_ppm(hot), 1000.0);  // 4 of 4000 offered
  // A port seen in one repetition only is that repetition's.
  EXPECT_DOUBLE_EQ(ports[1].utilization[1], 0.1);

  const std::vector<PortStats> tiers = tier_totals(ports);
  ASSERT_EQ(tiers.size(), 2u);
  EXPECT_EQ(tiers[0].tier, "leaf_down");
  EXPECT_EQ(tiers[0].packets, 4992u);
  EXPECT_EQ(tiers[0].depth_max_bytes, 50000u);
  EXPECT_TRUE(tiers[0].link.empty());

  const nlohmann::json j = report_json(rep);
  const nlohmann::json& v = j["variants"][0];
  EXPECT_EQ(v["ports"][0]["link"], "h0.nic0-leaf0");
  EXPECT_EQ(v["ports"][0]["end"], "leaf0");
  EXPECT_EQ(v["ports"][0]["ecn_marks"], "400");
  EXPECT_DOUBLE_EQ(v["ports"][0]["ecn_mark_ratio"].get<double>(), 400.0 / 3996);
  EXPECT_DOUBLE_EQ(v["ports"][0]["drops_ppm"].get<double>(), 1000.0);
  EXPECT_EQ(v["ports"][0]["depth_p95_bytes"], "40000");
  EXPECT_EQ(v["ports"][0]["utilization"].size(), 2u);
  EXPECT_EQ(v["port_tiers"][1]["tier"], "leaf_up");
  EXPECT_EQ(v["repetitions"][1]["ports"][0]["drops"], "4");

  const std::string text = run_summary(rep, "", "");
  EXPECT_NE(text.find("Switch port queues"), std::string::npos) << text;
  EXPECT_NE(text.find("h0.nic0-leaf0 @leaf0"), std::string::npos) << text;
  EXPECT_NE(text.find("all leaf_down"), std::string::npos) << text;
  const std::string html = render_html(rep, {a, b});
  EXPECT_NE(html.find("<h2>Switch port queues</h2>"), std::string::npos);
  EXPECT_NE(html.find("title=\"75%\""), std::string::npos);

  // No testbed, no port table.
  RunResult plain;
  plain.variant = "baseline";
  EXPECT_EQ(run_summary(build_report("unit", {plain}), "", "").find("Switch port queues"), std::string::npos);
}

}  // namespace
}  // namespace collide::orchestrator::report
