#pragma once

#include <string>
#include <vector>

// A line chart of values against a swept value, as one self-contained SVG element: every style is
// an attribute (no page CSS), so the same text is inlined in report.html and rendered to PNG.
namespace collide::orchestrator::report {

struct CurvePoint {
  double x = 0;
  double y = 0;
  std::string x_text;  // how the swept value was written ("1%"): the x axis' tick label
  // The 95% interval of y, drawn as a bar; low > high means none.
  double y_low = 1, y_high = 0;
};

struct Curve {
  std::string name;
  std::vector<CurvePoint> points;
};

struct CurveChart {
  std::string id;       // the element's id, and the PNG's name
  std::string title;
  std::string x_label;  // the swept field
  std::string y_label;  // with its unit
  std::vector<Curve> curves;
};

inline constexpr int kCurveWidth = 640;
inline constexpr int kCurveHeight = 400;

// Points are placed by their values: x on a log scale when every x is positive and they span more
// than a factor of 20 (loss probabilities, message sizes), else linear; y linear from 0. Each
// curve is drawn through its points in the order of x.
std::string curve_svg(const CurveChart& chart);

}  // namespace collide::orchestrator::report
