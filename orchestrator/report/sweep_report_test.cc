#include "orchestrator/report/sweep_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace collide::orchestrator::report {
namespace {

using ::testing::HasSubstr;

v1::SweepSetting setting(const std::string& field, const std::string& text, double value) {
  v1::SweepSetting s;
  s.set_field(field);
  s.set_text(text);
  s.set_value(value);
  return s;
}

v1::SweepVariantPoint variant(const std::string& name, double slowdown, double p99_us, uint32_t failed = 0) {
  v1::SweepVariantPoint v;
  v.set_name(name);
  v.set_runs(2);
  v.set_failed_runs(failed);
  v.set_slowdown_geomean(slowdown);
  v.add_slowdown_ci95(slowdown * 0.9);
  v.add_slowdown_ci95(slowdown * 1.1);
  v.set_p99_us(p99_us);
  return v;
}

// A loss sweep of three points; at each, the baseline and one lossy variant.
v1::SweepResults loss_sweep() {
  v1::SweepResults sweep;
  sweep.set_scenario("loss-sweep");
  sweep.add_fields("faults[0].probability");
  const char* texts[] = {"0.1%", "1%", "3%"};
  const double values[] = {0.001, 0.01, 0.03};
  for (int k = 0; k < 3; ++k) {
    v1::SweepPointResults& p = *sweep.add_points();
    *p.add_settings() = setting("faults[0].probability", texts[k], values[k]);
    p.set_directory("point-" + std::to_string(k + 1));
    *p.add_variants() = variant("baseline", 1.0, 40000);
    *p.add_variants() = variant("loss", 1.0 + 2 * k, 40000.0 * (k + 1));
  }
  return sweep;
}

TEST(SweepReportTest, EachSweptFieldGetsASlowdownAndAP99ChartWithOnePointPerValue) {
  const auto charts = sweep_charts(loss_sweep());
  ASSERT_EQ(charts.size(), 2u);
  EXPECT_EQ(charts[0].id, "slowdown-vs-faults-0-probability");
  EXPECT_EQ(charts[1].id, "p99-vs-faults-0-probability");
  EXPECT_EQ(charts[0].x_label, "faults[0].probability");
  for (const CurveChart& chart : charts) {
    ASSERT_EQ(chart.curves.size(), 2u) << chart.id;  // the baseline and the lossy variant
    EXPECT_EQ(chart.curves[0].name, "baseline");
    EXPECT_EQ(chart.curves[1].name, "loss");
    ASSERT_EQ(chart.curves[1].points.size(), 3u);
    EXPECT_DOUBLE_EQ(chart.curves[1].points[2].x, 0.03);
    EXPECT_EQ(chart.curves[1].points[2].x_text, "3%");
  }
  EXPECT_DOUBLE_EQ(charts[0].curves[1].points[2].y, 5.0);
  EXPECT_DOUBLE_EQ(charts[0].curves[1].points[2].y_low, 4.5);
  EXPECT_DOUBLE_EQ(charts[1].curves[1].points[1].y, 80000);
}

TEST(SweepReportTest, PointsWhoseRunsAllFailedOrWithoutABaselineAreLeftOutOfTheirCurve) {
  v1::SweepResults sweep = loss_sweep();
  *sweep.mutable_points(1)->mutable_variants(1) = variant("loss", 3, 80000, /*failed=*/2);
  sweep.mutable_points(2)->mutable_variants(1)->clear_slowdown_ci95();
  const auto charts = sweep_charts(sweep);
  EXPECT_EQ(charts[0].curves[1].points.size(), 1u);  // slowdown: the failed point and the one without
  EXPECT_EQ(charts[1].curves[1].points.size(), 2u);  // p99: only the failed point
}

TEST(SweepReportTest, WithTwoSweptFieldsEachValueOfTheOtherIsACurveOfItsOwn) {
  v1::SweepResults sweep;
  sweep.add_fields("faults[0].probability");
  sweep.add_fields("transport.qps_per_connection");
  for (double p : {0.01, 0.02}) {
    for (int qps : {1, 4}) {
      v1::SweepPointResults& point = *sweep.add_points();
      *point.add_settings() = setting("faults[0].probability", std::to_string(p), p);
      *point.add_settings() = setting("transport.qps_per_connection", std::to_string(qps), qps);
      *point.add_variants() = variant("loss", p * 100 + qps, 1000);
    }
  }
  const auto charts = sweep_charts(sweep);
  ASSERT_EQ(charts.size(), 4u);
  ASSERT_EQ(charts[0].curves.size(), 2u);
  EXPECT_EQ(charts[0].curves[0].name, "loss, transport.qps_per_connection=1");
  EXPECT_EQ(charts[0].curves[0].points.size(), 2u);
  EXPECT_EQ(charts[2].id, "slowdown-vs-transport-qps_per_connection");
  EXPECT_EQ(charts[2].curves[1].name, "loss, faults[0].probability=0.020000");
}

TEST(SweepReportTest, ThePageListsEveryPointAndInlinesEveryChart) {
  v1::SweepResults sweep = loss_sweep();
  sweep.add_curve_files("slowdown-vs-faults-0-probability.png");
  const std::string html = render_sweep_html(sweep, sweep_charts(sweep));
  EXPECT_THAT(html, HasSubstr("<a href=\"point-3/report.html\">3</a>"));
  EXPECT_THAT(html, HasSubstr("5.00x [4.50, 5.50]"));
  EXPECT_THAT(html, HasSubstr("<svg id=\"slowdown-vs-faults-0-probability\""));
  EXPECT_THAT(html, HasSubstr("<svg id=\"p99-vs-faults-0-probability\""));
  EXPECT_THAT(html, HasSubstr("href=\"slowdown-vs-faults-0-probability.png\""));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("href=\"p99-vs-faults-0-probability.png\"")));
  const auto json = nlohmann::json::parse(sweep_json(sweep));
  EXPECT_EQ(json["points"].size(), 3u);
  EXPECT_EQ(json["points"][1]["settings"][0]["text"], "1%");
}

TEST(SweepReportTest, APointsResultsCarryItsSettingsAndEachVariantsCurveValues) {
  Report report;
  report.sweep_point.push_back(setting("workload.collectives.bytes", "64KiB", 65536));
  VariantSummary base;
  base.name = "baseline";
  base.runs = 2;
  base.p99_us = 120;
  base.slowdown = {1, 1, 0.9, 1.1, 2};
  VariantSummary lossy = base;
  lossy.name = "loss";
  lossy.failed_runs = 1;
  lossy.slowdown = {2.1, 2, 1.5, 2.5, 2};
  lossy.p99_us = 300;
  report.variants = {base, lossy};
  const v1::SweepPointResults p = sweep_point_results(report, "point-2");
  EXPECT_EQ(p.directory(), "point-2");
  ASSERT_EQ(p.settings_size(), 1);
  EXPECT_EQ(p.settings(0).text(), "64KiB");
  ASSERT_EQ(p.variants_size(), 2);
  EXPECT_EQ(p.variants(1).failed_runs(), 1u);
  EXPECT_DOUBLE_EQ(p.variants(1).slowdown_geomean(), 2);
  EXPECT_DOUBLE_EQ(p.variants(1).slowdown_ci95(1), 2.5);
  EXPECT_DOUBLE_EQ(p.variants(1).p99_us(), 300);
  EXPECT_EQ(to_results(report).sweep_point(0).field(), "workload.collectives.bytes");
}

}  // namespace
}  // namespace collide::orchestrator::report
