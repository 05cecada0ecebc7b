#include <fmt/format.h>

#include "orchestrator/report/compare_output.h"
#include "orchestrator/report/html_escape.h"

namespace collide::orchestrator::report {
namespace {

std::string cells(const RatioInterval& r, int digits) {
  const char* css = r.verdict == CompareVerdict::kWorse    ? "worse"
                    : r.verdict == CompareVerdict::kBetter ? "better"
                                                    : "same";
  return fmt::format("<td>{:.{}f}</td><td>{:.{}f}</td><td>{}</td><td class=\"{}\">{}</td>", r.a,
                     digits, r.b, digits, html_escape(ratio_text(r)), css,
                     html_escape(verdict_name(r.verdict)));
}

std::string run_heading(const char* side, const std::string& label, const v1::Results& r) {
  return fmt::format("<div class=\"run\"><h3>{}: {}</h3><p>{}: {}</p></div>", side,
                     html_escape(label), html_escape(r.scenario()), html_escape(r.description()));
}

}  // namespace

std::string comparison_page_start(const std::string& a_label, const std::string& b_label,
                                  const std::string& a_heading, const std::string& b_heading, double level) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>collide compare: {0} / {1}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; max-width: 1400px; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 3px 6px; text-align: right; font-size: 13px; }}
th {{ background: #f4f4f4; }} td.name {{ text-align: left; }}
.runs {{ display: flex; gap: 2em; }} .run {{ flex: 1; border: 1px solid #ccc; padding: 0 1em; }}
td.worse {{ background: #fdd; }} td.better {{ background: #dfd; }}
.note {{ color: #555; }}
</style></head><body>
<h1>collide compare</h1>
<div class="runs">{2}{3}</div>
<p class="note">Ratios are B / A (above 1: B took longer) with {4:g}% intervals over repetitions:
p50 and p99 are each repetition's, A and B their geometric means over repetitions.</p>
)",
                     html_escape(a_label), html_escape(b_label), a_heading, b_heading, level * 100);
}

std::string comparison_html(const Comparison& c, const v1::Results& a, const v1::Results& b) {
  return comparison_page_start(c.a_label, c.b_label, run_heading("A", c.a_label, a), run_heading("B", c.b_label, b),
                               c.level) +
         comparison_variants_html(c, "h2") + "</body></html>\n";
}

std::string comparison_variants_html(const Comparison& c, const char* heading) {
  std::string html;
  for (const VariantComparison& v : c.variants) {
    html += fmt::format("<{0}>{1}</{0}>\n", heading, html_escape(v.name));
    if (!v.in_a || !v.in_b) {
      html += fmt::format("<p>Only in {}.</p>\n", v.in_a ? "A" : "B");
      continue;
    }
    html += fmt::format(
        "<table class=\"jct\"><tr><th></th><th>repetitions A</th><th>repetitions B</th><th>A</th>"
        "<th>B</th><th>B/A</th><th>verdict</th></tr>\n<tr><td class=\"name\">JCT (s)</td>"
        "<td>{}</td><td>{}</td>{}</tr>\n",
        v.completed_a, v.completed_b, cells(v.jct, 4));
    if (v.has_slowdown) {
      html += fmt::format(
          "<tr><td class=\"name\">JCT / its repetition's baseline JCT</td><td>{}</td><td>{}</td>{}"
          "</tr>\n",
          v.completed_a, v.completed_b, cells(v.slowdown, 3));
    }
    html += "</table>\n";
    html +=
        "<table class=\"compare\"><tr><th>collective</th><th>size (B)</th><th>type</th>"
        "<th>redop</th><th>ops A</th><th>ops B</th><th>p50 A (us)</th><th>p50 B (us)</th>"
        "<th>p50 B/A</th><th>p50 verdict</th><th>p99 A (us)</th><th>p99 B (us)</th><th>p99 B/A</th>"
        "<th>p99 verdict</th></tr>\n";
    for (const CompareRow& r : v.rows) {
      html += fmt::format(
          "<tr><td class=\"name\">{}</td><td>{}</td><td class=\"name\">{}</td><td "
          "class=\"name\">{}</td><td>{}{}</td><td>{}</td>{}{}</tr>\n",
          html_escape(r.kind), r.size_bytes, html_escape(r.type), html_escape(r.redop), r.count_a,
          r.sampled ? " (sampled)" : "", r.count_b, cells(r.p50, 1), cells(r.p99, 1));
    }
    html += "</table>\n";
    for (const auto& [list, side] : {std::pair{&v.rows_only_in_a, "A"}, std::pair{&v.rows_only_in_b, "B"}}) {
      for (const RowKey& k : *list) {
        html += fmt::format("<p>{} {} B {} {}: only in {}</p>\n", html_escape(k.kind), k.size_bytes,
                            html_escape(k.type), html_escape(k.redop), side);
      }
    }
  }
  return html;
}

}  // namespace collide::orchestrator::report
