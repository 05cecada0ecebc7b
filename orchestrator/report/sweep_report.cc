#include "orchestrator/report/sweep_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "orchestrator/report/html_escape.h"
#include "orchestrator/report/survival_html.h"

namespace collide::orchestrator::report {
namespace {

// "faults[0].probability" -> "faults-0-probability": a file and element name.
std::string slug(const std::string& field) {
  std::string out;
  for (char c : field) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (keep) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// The other swept fields' values at a point: what tells apart the curves of one chart.
std::string others_label(const v1::SweepPointResults& point, int field) {
  std::string out;
  for (int i = 0; i < point.settings_size(); ++i) {
    if (i == field) continue;
    out += fmt::format(", {}={}", point.settings(i).field(), point.settings(i).text());
  }
  return out;
}

CurveChart chart_for(const v1::SweepResults& sweep, int field, bool slowdown) {
  const std::string& name = sweep.fields(field);
  CurveChart chart;
  chart.id = fmt::format("{}-vs-{}", slowdown ? "slowdown" : "p99", slug(name));
  chart.title = slowdown ? fmt::format("Slowdown (JCT / baseline JCT) vs {}", name)
                         : fmt::format("p99 collective time vs {}", name);
  chart.x_label = name;
  chart.y_label = slowdown ? "slowdown (x), 95% interval" : "p99 collective completion time (us)";
  std::map<std::string, size_t> curve_of;  // curve name -> index
  for (const v1::SweepPointResults& point : sweep.points()) {
    if (field >= point.settings_size()) continue;
    const v1::SweepSetting& at = point.settings(field);
    for (const v1::SweepVariantPoint& v : point.variants()) {
      if (v.runs() == 0 || v.failed_runs() >= v.runs()) continue;
      if (slowdown && v.slowdown_ci95_size() != 2) continue;  // the baseline, or no baseline
      const std::string curve = v.name() + others_label(point, field);
      auto [it, fresh] = curve_of.emplace(curve, chart.curves.size());
      if (fresh) chart.curves.push_back({curve, {}});
      CurvePoint p;
      p.x = at.value();
      p.x_text = at.text();
      if (slowdown) {
        p.y = v.slowdown_geomean();
        p.y_low = v.slowdown_ci95(0);
        p.y_high = v.slowdown_ci95(1);
      } else {
        p.y = v.p99_us();
      }
      chart.curves[it->second].points.push_back(p);
    }
  }
  return chart;
}

}  // namespace

v1::SweepPointResults sweep_point_results(const Report& point, const std::string& directory) {
  v1::SweepPointResults out;
  for (const v1::SweepSetting& s : point.sweep_point) *out.add_settings() = s;
  out.set_directory(directory);
  for (const VariantSummary& v : point.variants) {
    v1::SweepVariantPoint& p = *out.add_variants();
    p.set_name(v.name);
    p.set_runs(v.runs);
    p.set_failed_runs(v.failed_runs);
    p.set_jct_mean_seconds(v.jct.mean);
    if (v.slowdown.n > 0) {
      p.set_slowdown_geomean(v.slowdown.geomean);
      p.add_slowdown_ci95(v.slowdown.low);
      p.add_slowdown_ci95(v.slowdown.high);
    }
    p.set_p99_us(v.p99_us);
  }
  return out;
}

std::vector<CurveChart> sweep_charts(const v1::SweepResults& sweep) {
  std::vector<CurveChart> charts;
  for (int f = 0; f < sweep.fields_size(); ++f) {
    charts.push_back(chart_for(sweep, f, true));
    charts.push_back(chart_for(sweep, f, false));
  }
  return charts;
}

std::string sweep_json(const v1::SweepResults& sweep) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(sweep, &json, options).ok()) return "{}";
  return json;
}

std::string render_sweep_html(const v1::SweepResults& sweep, const std::vector<CurveChart>& charts) {
  std::string html = fmt::format(
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>collide sweep: {0}</title>"
      "<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}"
      "td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}th{{background:#f4f4f4}}"
      "td.l{{text-align:left}}.failed{{color:#b00}}</style></head><body>"
      "<h1>Sweep: {0}</h1><p>{1}</p><p>{2} points over {3}; each point is a whole run of the scenario, "
      "compared with its own baseline.</p>",
      html_escape(sweep.scenario()), html_escape(sweep.description()), sweep.points_size(),
      html_escape([&] {
        std::string f;
        for (const auto& name : sweep.fields()) f += (f.empty() ? "" : ", ") + name;
        return f;
      }()));
  html += "<table id=\"points\"><tr><th>point</th>";
  for (const auto& name : sweep.fields()) html += "<th>" + html_escape(name) + "</th>";
  html += "<th>variant</th><th>runs (failed)</th><th>slowdown [95%]</th><th>p99 (us)</th><th>JCT mean (s)</th></tr>";
  for (int k = 0; k < sweep.points_size(); ++k) {
    const v1::SweepPointResults& point = sweep.points(k);
    const int rows = std::max(1, point.variants_size());
    std::string head = fmt::format("<td rowspan=\"{0}\" class=\"l\"><a href=\"{1}/report.html\">{2}</a></td>", rows,
                                   html_escape(point.directory()), k + 1);
    for (const auto& s : point.settings()) head += fmt::format("<td rowspan=\"{}\">{}</td>", rows, html_escape(s.text()));
    if (point.variants_size() == 0) {
      html += "<tr>" + head + fmt::format("<td colspan=\"5\" class=\"l failed\">{}</td></tr>", html_escape(point.failure()));
      continue;
    }
    for (int i = 0; i < point.variants_size(); ++i) {
      const v1::SweepVariantPoint& v = point.variants(i);
      const std::string slowdown =
          v.slowdown_ci95_size() == 2
              ? fmt::format("{:.2f}x [{:.2f}, {:.2f}]", v.slowdown_geomean(), v.slowdown_ci95(0), v.slowdown_ci95(1))
              : "-";
      html += fmt::format("<tr>{}<td class=\"l\">{}</td><td{}>{} ({})</td><td>{}</td><td>{:.1f}</td><td>{:.4f}</td></tr>",
                          i == 0 ? head : "", html_escape(v.name()), v.failed_runs() ? " class=\"failed\"" : "",
                          v.runs(), v.failed_runs(), slowdown, v.p99_us(), v.jct_mean_seconds());
    }
  }
  html += "</table>";
  html += survival_html(sweep);
  for (const CurveChart& chart : charts) {
    html += fmt::format("<h2>{}</h2>", html_escape(chart.title));
    const std::string png = chart.id + ".png";
    if (std::find(sweep.curve_files().begin(), sweep.curve_files().end(), png) != sweep.curve_files().end()) {
      html += fmt::format("<p><a href=\"{0}\">{0}</a></p>", html_escape(png));
    }
    html += curve_svg(chart);
  }
  return html + "</body></html>\n";
}

}  // namespace collide::orchestrator::report
