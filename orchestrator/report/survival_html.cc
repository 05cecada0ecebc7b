#include "orchestrator/report/survival_html.h"

#include <fmt/format.h>

#include "orchestrator/report/html_escape.h"

namespace collide::orchestrator::report {

std::string survival_html(const v1::SweepResults& sweep) {
  if (!sweep.has_survival()) return "";
  const v1::SweepSurvival& s = sweep.survival();
  std::string html = fmt::format(
      "<h2 id=\"survival\">Survival of {}</h2><p>{} swept; variant {}. Per attempt the transport waits "
      "4.096 us x 2<sup>{}</sup> x {} = {:.3f} ms; {} attempts (retry_count {} + 1) give an arithmetic limit of "
      "{:.3f} ms (its last resend at {:.3f} ms).</p>",
      html_escape(s.fault()), html_escape(s.field()), html_escape(s.variant()), s.timeout_exponent(),
      s.timeout_scale(), s.timeout_ms(), s.attempts(), s.retry_count(), s.limit_ms(), s.last_resend_ms());
  html += "<table id=\"survival-points\"><tr><th>flap</th><th>outcome</th><th>host</th><th>rank</th>"
          "<th>peer</th><th>QP</th><th>first failure</th></tr>";
  for (const v1::SurvivalPoint& p : s.points()) {
    if (p.survived()) {
      html += fmt::format("<tr><td>{}</td><td class=\"l\">survived ({} run(s))</td><td colspan=\"5\"></td></tr>",
                          html_escape(p.text()), p.runs());
      continue;
    }
    const auto number = [](int32_t v) { return v < 0 ? std::string("-") : std::to_string(v); };
    html += fmt::format(
        "<tr><td>{}</td><td class=\"l failed\">died</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>"
        "<td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
        html_escape(p.text()), html_escape(p.host()), number(p.rank()), number(p.peer_rank()), html_escape(p.qp()),
        html_escape(p.failure()));
  }
  html += "</table>";
  html += fmt::format("<p id=\"survival-verdict\" class=\"{}\"><b>{}</b>: {}</p>", s.within_one_step() ? "" : "failed",
                      s.within_one_step() ? "Within one step" : "Not within one step", html_escape(s.verdict()));
  return html;
}

}  // namespace collide::orchestrator::report
