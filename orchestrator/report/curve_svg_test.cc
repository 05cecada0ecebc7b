#include "orchestrator/report/curve_svg.h"

#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace collide::orchestrator::report {
namespace {

using ::testing::HasSubstr;

struct Placed {
  double cx, cy;
};

// The points' circles in the order they are drawn.
std::vector<Placed> circles(const std::string& svg) {
  static const std::regex circle(R"re(<circle class="point" cx="([0-9.\-]+)" cy="([0-9.\-]+)")re");
  std::vector<Placed> out;
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it) {
    out.push_back({std::stod((*it)[1].str()), std::stod((*it)[2].str())});
  }
  return out;
}

CurveChart loss_chart(std::vector<CurvePoint> points) {
  CurveChart chart;
  chart.id = "slowdown-vs-faults-0-probability";
  chart.title = "Slowdown vs faults[0].probability";
  chart.x_label = "faults[0].probability";
  chart.y_label = "slowdown (x)";
  chart.curves.push_back({"loss", std::move(points)});
  return chart;
}

TEST(CurveSvgTest, PointsArePlacedInTheOrderOfTheirValuesOnBothAxes) {
  // Given out of order: drawn by x, and a larger y is higher up (a smaller cy).
  const std::string svg = curve_svg(loss_chart({{0.05, 6.2, "5%"}, {0.001, 1.02, "0.1%"}, {0.01, 1.9, "1%"}}));
  const auto placed = circles(svg);
  ASSERT_EQ(placed.size(), 3u);
  for (size_t i = 1; i < placed.size(); ++i) {
    EXPECT_GT(placed[i].cx, placed[i - 1].cx) << i;
    EXPECT_LT(placed[i].cy, placed[i - 1].cy) << i;
  }
  // Inside the drawing.
  for (const auto& p : placed) {
    EXPECT_GT(p.cx, 0);
    EXPECT_LT(p.cx, kCurveWidth);
    EXPECT_GT(p.cy, 0);
    EXPECT_LT(p.cy, kCurveHeight);
  }
  // 0.1% .. 5% spans a factor of 50: log scale, so 1% sits past the middle, not near 0.1%.
  EXPECT_THAT(svg, HasSubstr("(log scale)"));
  EXPECT_GT(placed[1].cx - placed[0].cx, 0.5 * (placed[2].cx - placed[1].cx));
}

TEST(CurveSvgTest, ALinearScaleSpacesValuesByTheirDifferences) {
  const auto placed = circles(curve_svg(loss_chart({{1, 1, "1"}, {2, 1.5, "2"}, {4, 1.2, "4"}})));
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_NEAR(placed[2].cx - placed[1].cx, 2 * (placed[1].cx - placed[0].cx), 0.2);
  // Not monotonic in y: 2 is the highest point.
  EXPECT_LT(placed[1].cy, placed[0].cy);
  EXPECT_LT(placed[1].cy, placed[2].cy);
}

TEST(CurveSvgTest, AxisLabelsTicksTitleAndLegendArePresent) {
  CurveChart chart = loss_chart({{0.001, 1.0, "0.1%"}, {0.01, 2.0, "1%", 1.5, 2.5}});
  chart.curves.push_back({"loss, qps=4 <fast>", {{0.001, 1.0, "0.1%"}}});
  const std::string svg = curve_svg(chart);
  EXPECT_THAT(svg, HasSubstr("<svg id=\"slowdown-vs-faults-0-probability\""));
  EXPECT_THAT(svg, HasSubstr("width=\"640\" height=\"400\""));
  EXPECT_THAT(svg, HasSubstr("class=\"x-label\""));
  EXPECT_THAT(svg, HasSubstr(">faults[0].probability"));
  EXPECT_THAT(svg, HasSubstr("class=\"y-label\""));
  EXPECT_THAT(svg, HasSubstr(">slowdown (x)</text>"));
  EXPECT_THAT(svg, HasSubstr(">Slowdown vs faults[0].probability</text>"));
  EXPECT_THAT(svg, HasSubstr("class=\"x-tick\""));
  EXPECT_THAT(svg, HasSubstr(">0.1%</text>"));
  EXPECT_THAT(svg, HasSubstr(">1%</text>"));
  EXPECT_THAT(svg, HasSubstr("class=\"y-tick\""));
  // Escaped, and the interval drawn once (only the point that has one).
  EXPECT_THAT(svg, HasSubstr("loss, qps=4 &lt;fast&gt;"));
  EXPECT_EQ(circles(svg).size(), 3u);
  size_t intervals = 0;
  for (size_t at = svg.find("class=\"interval\""); at != std::string::npos; at = svg.find("class=\"interval\"", at + 1)) {
    ++intervals;
  }
  EXPECT_EQ(intervals, 1u);
}

TEST(CurveSvgTest, LargeTickValuesAreWholeNumbersNotExponents) {
  const std::string svg = curve_svg(loss_chart({{1, 100000, "1"}, {2, 142557.4, "2"}}));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("e+0")));
  // The top tick is 1.1 x the largest value.
  EXPECT_THAT(svg, HasSubstr(">156813</text>"));
}

TEST(CurveSvgTest, AChartWithoutPointsIsStillAnSvgElement) {
  CurveChart chart = loss_chart({});
  const std::string svg = curve_svg(chart);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
  EXPECT_TRUE(circles(svg).empty());
}

}  // namespace
}  // namespace collide::orchestrator::report
