#include "orchestrator/report/port_pfc.h"

#include <fmt/format.h>

#include "orchestrator/report/port_queues.h"
#include "orchestrator/report/report.h"

namespace collide::orchestrator::report {
namespace {

bool paused_or_pausing(const PortStats& p) { return p.pause_frames + p.pause_frames_sent > 0; }

bool any_lossless(const VariantSummary& v) {
  for (const PortStats& p : v.ports) {
    if (p.lossless) return true;
  }
  return false;
}

size_t ports_held(const VariantSummary& v) {
  size_t n = 0;
  for (const PortStats& p : v.ports) n += p.paused_ns > 0 ? 1 : 0;
  return n;
}

size_t ports_deadlocked(const VariantSummary& v) {
  size_t n = 0;
  for (const PortStats& p : v.ports) n += p.deadlocks > 0 ? 1 : 0;
  return n;
}

// "1: 2431.0 ms" (cycles entered, time in them), or "-".
std::string deadlock_cell(const PortStats& p) {
  if (p.deadlocks == 0) return "-";
  return fmt::format("{}: {:.1f} ms", p.deadlocks, static_cast<double>(p.deadlocked_ns) / 1e6);
}

// What a variant's summary line adds when its queues deadlocked.
std::string deadlock_note(const VariantSummary& v) {
  const size_t n = ports_deadlocked(v);
  return n == 0 ? "" : fmt::format("; {} in a cycle of paused queues each waiting on the next (a PFC deadlock)", n);
}

// "2: held 10.0 ms before detection, restored after 200.0 ms" (the means), or "-".
std::string watchdog_cell(const PortStats& p) {
  if (p.watchdog_events.empty()) return "-";
  double detect = 0, restore = 0;
  size_t restored = 0;
  for (const PfcWatchdogEventStats& e : p.watchdog_events) {
    detect += static_cast<double>(e.detected_ns - e.held_since_ns);
    if (e.restored_ns != 0) {
      restore += static_cast<double>(e.restored_ns - e.detected_ns);
      ++restored;
    }
  }
  const double n = static_cast<double>(p.watchdog_events.size());
  std::string out = fmt::format("{}: held {:.1f} ms before detection", p.watchdog_events.size(), detect / n / 1e6);
  if (restored > 0) out += fmt::format(", restored after {:.1f} ms", restore / static_cast<double>(restored) / 1e6);
  return out;
}

}  // namespace

std::string port_pfc_text(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    if (!any_lossless(v)) continue;
    if (out.empty()) {
      out = "\nPriority flow control on the switch ports (lossless; all repetitions)\n";
      out += fmt::format("  {:<20} {:<22} {:<10} {:>4} {:>10} {:>11} {:>11} {:>16}  {}\n", "variant", "port",
                         "tier", "prio", "pauses in", "paused ms", "pauses out", "deadlocked", "watchdog");
    }
    for (const PortStats& p : v.ports) {
      if (!paused_or_pausing(p)) continue;
      out += fmt::format("  {:<20} {:<22} {:<10} {:>4} {:>10} {:>11.1f} {:>11} {:>16}  {}\n", v.name, port_label(p),
                         p.tier, p.pfc_priority, p.pause_frames, static_cast<double>(p.paused_ns) / 1e6,
                         p.pause_frames_sent, deadlock_cell(p), watchdog_cell(p));
    }
    out += fmt::format("  {:<20} pauses held {} of {} switch ports{}\n", v.name, ports_held(v), v.ports.size(),
                       deadlock_note(v));
  }
  return out;
}

std::string port_pfc_html(const Report& report, std::string (*escape)(const std::string&)) {
  std::string html;
  for (const VariantSummary& v : report.variants) {
    if (!any_lossless(v)) continue;
    html += fmt::format("<h3>{}</h3>\n<p>Pauses held {} of {} switch ports{}.</p>\n<table><tr><th>port</th>"
                        "<th>tier</th><th>priority</th><th>pause_frames</th><th>paused (ms)</th>"
                        "<th>pause_frames_sent</th><th>deadlocked</th><th>watchdog</th></tr>\n",
                        escape(v.name), ports_held(v), v.ports.size(), escape(deadlock_note(v)));
    for (const PortStats& p : v.ports) {
      if (!paused_or_pausing(p)) continue;
      html += fmt::format("<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td>"
                          "<td>{:.1f}</td><td>{}</td><td>{}</td><td class=\"name\">{}</td></tr>\n",
                          escape(port_label(p)), escape(p.tier), p.pfc_priority, p.pause_frames,
                          static_cast<double>(p.paused_ns) / 1e6, p.pause_frames_sent, escape(deadlock_cell(p)),
                          escape(watchdog_cell(p)));
    }
    html += "</table>\n";
  }
  return html.empty() ? html : "<h2>Priority flow control</h2>\n" + html;
}

}  // namespace collide::orchestrator::report
