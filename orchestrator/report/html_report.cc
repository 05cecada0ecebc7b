#include "orchestrator/report/html_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "orchestrator/report/html_escape.h"
#include "orchestrator/report/host_flow_control.h"
#include "orchestrator/report/out_of_order.h"
#include "orchestrator/report/ecmp_table.h"
#include "orchestrator/report/roofline_table.h"
#include "orchestrator/report/topology_svg.h"
#include "orchestrator/report/port_pfc.h"
#include "orchestrator/report/port_queues.h"
#include "traces/op_types.h"

namespace collide::orchestrator::report {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#17becf"};

std::string escape(const std::string& s) { return html_escape(s); }

std::string color(size_t i) { return kColors[i % std::size(kColors)]; }

// Empirical CDFs of collective completion time, one line per variant, log-scaled time axis.
std::string cdf_svg(const Report& report) {
  constexpr double kW = 760, kH = 320, kLeft = 60, kBottom = 40, kTop = 10, kRight = 50;
  double lo = 1e300, hi = 0;
  for (const VariantSummary& v : report.variants) {
    for (double t : v.collective_us) {
      lo = std::min(lo, std::max(t, 1.0));
      hi = std::max(hi, t);
    }
  }
  if (hi <= 0) return "<p>No completed collectives.</p>";
  const double llo = std::floor(std::log10(lo)), lhi = std::ceil(std::log10(std::max(hi, lo * 10)));
  auto x = [&](double t) {
    return kLeft + (std::log10(std::max(t, 1.0)) - llo) / (lhi - llo) * (kW - kLeft - kRight);
  };
  auto y = [&](double f) { return kTop + (1 - f) * (kH - kTop - kBottom); };
  std::string svg = fmt::format(
      "<svg class=\"chart\" id=\"cdf\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">",
      kW, kH, kW, kH);
  for (double d = llo; d <= lhi; d += 1) {
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" class=\"tick\">{4}</text>",
                       x(std::pow(10, d)), kTop, kH - kBottom, kH - kBottom + 16,
                       fmt::format("10^{:.0f} us", d));
  }
  for (double f : {0.0, 0.5, 0.9, 0.99}) {
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>"
                       "<text x=\"5\" y=\"{3:.1f}\" class=\"tick\">{4}</text>",
                       kLeft, kW - kRight, y(f), y(f) + 4, f);
  }
  for (size_t i = 0; i < report.variants.size(); ++i) {
    std::vector<double> t = report.variants[i].collective_us;
    if (t.empty()) continue;
    std::sort(t.begin(), t.end());
    std::string points;
    for (size_t k = 0; k < t.size(); ++k) {
      points += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", x(t[k]), y(static_cast<double>(k) / t.size()),
                            x(t[k]), y(static_cast<double>(k + 1) / t.size()));
    }
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                       "class=\"cdf-line\" data-variant=\"{}\"/>",
                       points, color(i), escape(report.variants[i].name));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\" class=\"legend\">{}</text>", kLeft + 10,
                       kTop + 16 + 16 * i, color(i), escape(report.variants[i].name));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\">collective completion time</text>",
                     kW / 2 - 80, kH - 4);
  return svg + "</svg>";
}

// Mean JCT of each training iteration over the completed repetitions, one bar per variant per
// iteration: where in the job a fault cost time.
std::string iterations_svg(const Report& report) {
  std::vector<std::vector<double>> means;  // [variant][iteration]
  double top = 0;
  size_t iterations = 0;
  for (const VariantSummary& v : report.variants) {
    std::vector<double> sum;
    std::vector<int> n;
    for (const RepetitionSummary& r : v.repetitions) {
      if (r.failed) continue;
      sum.resize(std::max(sum.size(), r.iteration_seconds.size()), 0);
      n.resize(sum.size(), 0);
      for (size_t i = 0; i < r.iteration_seconds.size(); ++i) {
        sum[i] += r.iteration_seconds[i];
        ++n[i];
      }
    }
    for (size_t i = 0; i < sum.size(); ++i) {
      if (n[i] > 0) sum[i] /= n[i];
      top = std::max(top, sum[i]);
    }
    iterations = std::max(iterations, sum.size());
    means.push_back(std::move(sum));
  }
  if (top <= 0) return "<p>No completed iterations.</p>";
  constexpr double kW = 760, kH = 220, kLeft = 60, kRight = 20, kTop = 10, kBottom = 30;
  const double group = (kW - kLeft - kRight) / static_cast<double>(iterations);
  const double bar = std::max(1.0, group * 0.8 / static_cast<double>(means.size()));
  std::string svg = fmt::format(
      "<svg class=\"chart\" id=\"iterations\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" "
      "height=\"{1}\" xmlns=\"http://www.w3.org/2000/svg\">"
      "<text x=\"5\" y=\"{2}\" class=\"tick\">{3:.3g} s</text>"
      "<line x1=\"{4}\" x2=\"{5}\" y1=\"{6}\" y2=\"{6}\" class=\"grid\"/>",
      kW, kH, kTop + 10, top, kLeft, kW - kRight, kH - kBottom);
  for (size_t v = 0; v < means.size(); ++v) {
    for (size_t i = 0; i < means[v].size(); ++i) {
      const double h = means[v][i] / top * (kH - kTop - kBottom);
      svg += fmt::format("<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                         "height=\"{:.1f}\" fill=\"{}\"><title>{} iteration {}: {:.6f} s</title></rect>",
                         kLeft + group * static_cast<double>(i) + bar * static_cast<double>(v),
                         kH - kBottom - h, bar, std::max(h, 0.5), color(v),
                         escape(report.variants[v].name), i, means[v][i]);
    }
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\">iterations 0..{}</text>", kW / 2 - 40,
                     kH - 8, iterations - 1);
  return svg + "</svg>";
}

// Every rank's ops as bars on a shared time axis; fault windows shaded behind them.
std::string timeline_svg(const RunResult& run, const std::string& id) {
  if (run.ops.empty()) return "<p>No ops recorded.</p>";
  uint64_t t0 = UINT64_MAX, t1 = 0;
  uint32_t ranks = 0;
  for (const OpTiming& op : run.ops) {
    t0 = std::min(t0, op.start_ns);
    t1 = std::max(t1, op.end_ns);
    ranks = std::max(ranks, op.rank + 1);
  }
  const double span = static_cast<double>(std::max<uint64_t>(t1 - t0, 1));
  constexpr double kW = 760, kLeft = 60, kRight = 20, kRow = 16, kTop = 14;
  const double h = kTop + ranks * kRow + 30;
  auto x = [&](uint64_t t) {
    return kLeft + static_cast<double>(t - std::min(t, t0)) / span * (kW - kLeft - kRight);
  };
  std::string svg = fmt::format(
      "<svg class=\"chart timeline\" id=\"{}\" viewBox=\"0 0 {} {:.0f}\" width=\"{}\" "
      "height=\"{:.0f}\" xmlns=\"http://www.w3.org/2000/svg\">",
      id, kW, h, kW, h);
  for (const FaultWindow& f : run.faults) {
    // Each fault where it was measured to hold; one that never held (the run ended first) is not
    // drawn, and one still holding when the run ended reaches its end.
    if (f.start_ns == 0) continue;
    const uint64_t start = std::clamp(f.start_ns, t0, t1);
    const uint64_t end = std::clamp(f.end_ns == 0 ? t1 : f.end_ns, start, t1);
    // Taller than the rows, so the window shows above and below the ops it covers.
    svg += fmt::format("<rect class=\"fault\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\">"
                       "<title>{} ({}): {:.1f} ms from {:.1f} ms</title></rect>",
                       x(start), kTop - 6, std::max(1.0, x(end) - x(start)), ranks * kRow + 12,
                       escape(f.name), escape(f.kind), static_cast<double>(end - start) / 1e6,
                       static_cast<double>(start - t0) / 1e6);
  }
  for (uint32_t r = 0; r < ranks; ++r) {
    svg += fmt::format("<text x=\"5\" y=\"{:.0f}\" class=\"tick\">rank {}</text>",
                       kTop + r * kRow + 12, r);
  }
  for (const OpTiming& op : run.ops) {
    svg += fmt::format(
        "<rect class=\"op{}\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\">"
        "<title>rank {} op {} {} {} B: {:.1f} us</title></rect>",
        op.failed ? " failed" : "", x(op.start_ns), kTop + op.rank * kRow + 2,
        std::max(0.5, x(op.end_ns) - x(op.start_ns)), kRow - 4,
        op.failed ? "#000" : color(static_cast<size_t>(op.kind)), op.rank, op.op_index,
        traces::op_kind_name(op.kind), op.bytes,
        static_cast<double>(op.end_ns - op.start_ns) / 1e3);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{:.0f}\" class=\"axis\">{:.3f} ms</text>", kW - 90, h - 6,
                     span / 1e6);
  return svg + "</svg>";
}

}  // namespace

std::string render_html(const Report& report, const std::vector<RunResult>& runs) {
  std::string html = fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>collide report: {0}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; max-width: 1200px; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 3px 6px; text-align: right; font-size: 13px; }}
th {{ background: #f4f4f4; }} td.name {{ text-align: left; }}
.grid {{ stroke: #e5e5e5; }} .tick {{ font-size: 11px; fill: #555; }}
.axis {{ font-size: 12px; fill: #333; }} .legend {{ font-size: 13px; font-weight: bold; }}
.fault {{ fill: #ff9999; }} .op {{ opacity: 0.75; }} .failed {{ stroke: #000; }}
pre {{ background: #f8f8f8; padding: 8px; overflow-x: auto; }}
.failure {{ color: #b00; }}
</style></head><body>
<h1>collide report: {0}</h1>
<p>{1}</p>
<h2>Job completion</h2>
<table id="summary"><tr><th>variant</th><th>runs</th><th>failed</th><th>JCT mean (s)</th>
<th>JCT 95% CI (s)</th><th>slowdown vs baseline</th><th>p50 (us)</th><th>p99 (us)</th>
<th>p99.9 (us)</th><th>max (us)</th><th>retransmitted</th><th>timeouts</th></tr>
)",
                                 escape(report.scenario), escape(report.description));
  for (const VariantSummary& v : report.variants) {
    html += fmt::format(
        "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{:.4f}</td><td>{:.4f} .. {:.4f}</td>"
        "<td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{}</td><td>{}</td></tr>\n",
        escape(v.name), v.runs, v.failed_runs, v.jct.mean, v.jct.low, v.jct.high,
        v.slowdown.n > 0 ? fmt::format("{:.3f}x ({:.3f} .. {:.3f})", v.slowdown.mean,
                                       v.slowdown.low, v.slowdown.high)
                         : "-",
        v.p50_us, v.p99_us, v.p999_us, v.max_us, v.retransmitted_packets, v.timeouts);
  }
  html += "</table>\n";
  for (const VariantSummary& v : report.variants) {
    for (const std::string& f : v.failures) {
      html += fmt::format("<p class=\"failure\">{}: {}</p>\n", escape(v.name), escape(f));
    }
  }
  if (const auto rows = out_of_order_rows(report); !rows.empty()) {
    html += "<table id=\"out-of-order\"><tr><th>variant</th><th>out-of-order rate</th>"
            "<th>out-of-order packets</th><th>packets received</th></tr>\n";
    for (const OutOfOrderRow& r : rows) {
      html += fmt::format("<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          escape(r.variant), r.rate, r.out_of_order_packets, r.packets_received);
    }
    html += "</table>\n";
  }
  if (const auto rows = host_flow_control_rows(report); !rows.empty()) {
    html += "<table id=\"host-flow-control\"><tr><th>variant</th><th>pause frames received</th>"
            "<th>sending held (ms)</th><th>pause frames sent</th><th>dropped, NIC buffer full</th></tr>\n";
    for (const HostFlowControlRow& r : rows) {
      html += fmt::format(
          "<tr><td class=\"name\">{}</td><td>{}</td><td>{:.3f}</td><td>{}</td><td>{}</td></tr>\n",
          escape(r.variant), r.pause_frames, r.paused_ms, r.pause_frames_sent, r.buffer_dropped);
    }
    html += "</table>\n";
  }
  if (const std::string jobs = jobs_text(report); !jobs.empty()) {
    html += "<h2>Jobs</h2>\n<pre id=\"jobs\">" + escape(jobs.substr(1)) + "</pre>\n";
  }
  html += "<h2>Collective completion times (CDF)</h2>\n" + cdf_svg(report) + "\n";
  html += "<h2>Job completion time per iteration</h2>\n" + iterations_svg(report) + "\n";
  if (!report.hours.empty()) {
    html += "<h2>By hour of the soak</h2>\n<pre id=\"hours\">" + escape(soak_hours_table(report.hours)) + "</pre>\n";
  }
  html += "<h2>Per collective size (nccl-tests layout)</h2>\n";
  for (const VariantSummary& v : report.variants) {
    html += "<pre>" + escape(size_table(v)) + "</pre>\n";
    // Production beside replay, where the trace measured the job's own times.
    if (!v.production.empty()) html += "<pre>" + escape(production_table(v)) + "</pre>\n";
  }
  if (const std::string t = roofline_table(report); !t.empty()) {
    html += "<h2>JCT against the roofline</h2>\n<pre id=\"roofline\">" + escape(t.substr(1)) + "</pre>\n";
  }
  if (const std::string t = ecmp_table(report); !t.empty()) {
    html += "<h2>ECMP balance</h2>\n<pre id=\"ecmp\">" + escape(t) + "</pre>\n";
  }
  // Each variant's fabric as its most unevenly balanced repetition loaded it (the worst a hash
  // collision did), or its first when nothing was balanced over spines.
  std::string fabrics;
  for (const VariantSummary& v : report.variants) {
    const RepetitionSummary* shown = nullptr;
    for (const RepetitionSummary& r : v.repetitions) {
      if (r.fabric_links.empty()) continue;
      if (shown == nullptr || r.ecmp.leaf_uplinks.max_mean > shown->ecmp.leaf_uplinks.max_mean) shown = &r;
    }
    if (shown == nullptr) continue;
    const std::string balance = shown->ecmp.leaf_uplinks.links == 0
                                    ? ""
                                    : fmt::format(": leaf uplinks max/mean {:.2f}", shown->ecmp.leaf_uplinks.max_mean);
    fabrics += fmt::format("<h3>{} (repetition {}{})</h3>\n", escape(v.name), shown->repetition, balance) +
               topology_svg(shown->fabric_links, "topology-" + v.name) + "\n";
  }
  if (!fabrics.empty()) {
    html += "<h2>Fabric (each link as dark and wide as the bytes it carried)</h2>\n" + fabrics;
  }
  html += "<h2>Injected faults (ground truth)</h2>\n<table><tr><th>variant</th><th>fault</th>"
          "<th>kind</th><th>packets matched</th><th>packets acted on</th></tr>\n";
  for (const VariantSummary& v : report.variants) {
    for (const FaultWindow& f : v.faults) {
      html += fmt::format("<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td "
                          "class=\"name\">{}</td><td>{}</td><td>{}</td></tr>\n",
                          escape(v.name), escape(f.name), escape(f.kind), f.packets_matched,
                          f.packets_acted);
    }
  }
  html += "</table>\n" + port_queues_html(report, escape) + port_pfc_html(report, escape);
  html += "<h2>Timelines (first repetition; fault windows shaded)</h2>\n";
  for (const VariantSummary& v : report.variants) {
    auto it = std::find_if(runs.begin(), runs.end(),
                           [&](const RunResult& r) { return r.variant == v.name; });
    if (it == runs.end()) continue;
    html += fmt::format("<h3>{}</h3>\n", escape(v.name)) + timeline_svg(*it, "timeline-" + v.name) + "\n";
  }
  return html + "</body></html>\n";
}

}  // namespace collide::orchestrator::report
