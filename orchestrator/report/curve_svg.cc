#include "orchestrator/report/curve_svg.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "orchestrator/report/html_escape.h"

namespace collide::orchestrator::report {
namespace {

constexpr double kLeft = 80, kRight = 170, kTop = 40, kBottom = 60;  // room for ticks, labels, legend
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"};

struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  double from = 0, to = 1;  // pixels
  double operator()(double v) const {
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double t = b > a ? ((log ? std::log10(v) : v) - a) / (b - a) : 0.5;
    return from + t * (to - from);
  }
};

// Whole numbers from 1000 up (microseconds: "157000", not "1.57e+05"), three digits below.
std::string tick_text(double v) { return v >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

}  // namespace

std::string curve_svg(const CurveChart& chart) {
  const double plot_w = kCurveWidth - kLeft - kRight, plot_h = kCurveHeight - kTop - kBottom;
  // Distinct x values with their labels, and the y range (intervals included).
  std::map<double, std::string> ticks;
  double y_max = 0;
  for (const Curve& c : chart.curves) {
    for (const CurvePoint& p : c.points) {
      ticks.emplace(p.x, p.x_text);
      y_max = std::max({y_max, p.y, p.y_low <= p.y_high ? p.y_high : 0.0});
    }
  }
  Scale x{0, 1, false, kLeft, kLeft + plot_w};
  if (!ticks.empty()) {
    x.lo = ticks.begin()->first;
    x.hi = ticks.rbegin()->first;
    x.log = x.lo > 0 && x.hi / x.lo > 20;
  }
  Scale y{0, y_max > 0 ? y_max * 1.1 : 1, false, kTop + plot_h, kTop};
  std::string svg = fmt::format(
      "<svg id=\"{0}\" class=\"curve\" viewBox=\"0 0 {1} {2}\" width=\"{1}\" height=\"{2}\" "
      "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\">"
      "<rect width=\"{1}\" height=\"{2}\" fill=\"#ffffff\"/>"
      "<text x=\"{3}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{4}</text>",
      html_escape(chart.id), kCurveWidth, kCurveHeight, kLeft, html_escape(chart.title));
  // Axes, a grid line and label per y tick, a tick per swept value.
  svg += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#333\"/>"
                     "<line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#333\"/>",
                     kLeft, kTop, kTop + plot_h, kLeft + plot_w);
  for (int i = 0; i <= 4; ++i) {
    const double v = y.hi * i / 4;
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text class=\"y-tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
                       kLeft, kLeft + plot_w, y(v), kLeft - 6, y(v) + 4, tick_text(v));
  }
  for (const auto& [value, text] : ticks) {
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#333\"/>"
                       "<text class=\"x-tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
                       x(value), kTop + plot_h, kTop + plot_h + 5, kTop + plot_h + 18, html_escape(text));
  }
  svg += fmt::format("<text class=\"x-label\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>",
                     kLeft + plot_w / 2, kCurveHeight - 14, html_escape(chart.x_label), x.log ? " (log scale)" : "");
  svg += fmt::format("<text class=\"y-label\" x=\"0\" y=\"0\" text-anchor=\"middle\" "
                     "transform=\"translate(18 {:.1f}) rotate(-90)\">{}</text>",
                     kTop + plot_h / 2, html_escape(chart.y_label));
  for (size_t c = 0; c < chart.curves.size(); ++c) {
    const Curve& curve = chart.curves[c];
    const char* color = kColors[c % std::size(kColors)];
    std::vector<CurvePoint> points = curve.points;
    std::stable_sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
    std::string line;
    for (const CurvePoint& p : points) line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", x(p.x), y(p.y));
    svg += fmt::format("<g class=\"series\" data-name=\"{}\">", html_escape(curve.name));
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>", line, color);
    for (const CurvePoint& p : points) {
      if (p.y_low <= p.y_high) {
        svg += fmt::format("<line class=\"interval\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                           "stroke=\"{3}\"/>",
                           x(p.x), y(p.y_low), y(p.y_high), color);
      }
      svg += fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" "
                         "data-x=\"{}\" data-y=\"{}\"/>",
                         x(p.x), y(p.y), color, p.x, p.y);
    }
    svg += "</g>";
    svg += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>", kLeft + plot_w + 10,
                       kTop + 14 + 18 * static_cast<double>(c), color, html_escape(curve.name));
  }
  return svg + "</svg>";
}

}  // namespace collide::orchestrator::report
