#include "orchestrator/report/port_queues.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "orchestrator/report/report.h"

namespace collide::orchestrator::report {
namespace {

void add_counters(PortStats& into, const PortStats& p) {
  into.bytes += p.bytes;
  into.packets += p.packets;
  into.drops += p.drops;
  into.ecn_marks += p.ecn_marks;
  into.samples += p.samples;
  into.depth_p95_bytes = std::max(into.depth_p95_bytes, p.depth_p95_bytes);
  into.depth_max_bytes = std::max(into.depth_max_bytes, p.depth_max_bytes);
  into.lossless = into.lossless || p.lossless;
  into.pfc_priority = p.pfc_priority;
  into.pause_frames += p.pause_frames;
  into.paused_ns += p.paused_ns;
  into.pause_frames_sent += p.pause_frames_sent;
  into.watchdog_events.insert(into.watchdog_events.end(), p.watchdog_events.begin(), p.watchdog_events.end());
  into.deadlocks += p.deadlocks;
  into.deadlocked_ns += p.deadlocked_ns;
}

std::string text_row(const std::string& variant, const std::string& port, const PortStats& p) {
  return fmt::format("  {:<20} {:<22} {:<10} {:>14} {:>11} {:>9} {:>10} {:>9.4f} {:>10.0f} {:>11} {:>11}\n",
                     variant, port, p.tier, p.bytes, p.packets, p.drops, p.ecn_marks, ecn_mark_ratio(p),
                     drops_ppm(p), p.depth_p95_bytes, p.depth_max_bytes);
}

}  // namespace

std::string port_label(const PortStats& p) { return p.link + " @" + p.end; }

void PortMerge::add(const std::vector<PortStats>& run) {
  for (const PortStats& p : run) {
    auto [it, fresh] = index_.try_emplace({p.link, p.end}, merged_.size());
    if (fresh) {
      PortStats first = p;
      first.bytes = first.packets = first.drops = first.ecn_marks = first.samples = 0;
      first.depth_p95_bytes = first.depth_max_bytes = 0;
      first.pause_frames = first.paused_ns = first.pause_frames_sent = 0;
      first.deadlocks = first.deadlocked_ns = 0;
      first.watchdog_events.clear();
      first.utilization.assign(p.utilization.size(), 0.0);
      first.bin_seconds = 0;
      merged_.push_back(std::move(first));
      runs_.push_back(0);
    }
    PortStats& m = merged_[it->second];
    add_counters(m, p);
    ++runs_[it->second];
    m.bin_seconds += p.bin_seconds;
    if (m.utilization.size() < p.utilization.size()) m.utilization.resize(p.utilization.size(), 0.0);
    for (size_t b = 0; b < p.utilization.size(); ++b) m.utilization[b] += p.utilization[b];
  }
}

std::vector<PortStats> PortMerge::result() const {
  std::vector<PortStats> out = merged_;
  for (size_t i = 0; i < out.size(); ++i) {
    const double n = static_cast<double>(runs_[i]);
    out[i].bin_seconds /= n;
    for (double& u : out[i].utilization) u /= n;
  }
  return out;
}

std::vector<PortStats> tier_totals(const std::vector<PortStats>& ports) {
  std::vector<PortStats> out;
  for (const PortStats& p : ports) {
    auto it = std::find_if(out.begin(), out.end(), [&](const PortStats& t) { return t.tier == p.tier; });
    if (it == out.end()) {
      PortStats t;
      t.tier = p.tier;
      t.gbps = p.gbps;
      out.push_back(std::move(t));
      it = out.end() - 1;
    }
    add_counters(*it, p);
  }
  return out;
}

double ecn_mark_ratio(const PortStats& p) {
  return p.packets == 0 ? 0.0 : static_cast<double>(p.ecn_marks) / static_cast<double>(p.packets);
}

double drops_ppm(const PortStats& p) {
  const uint64_t offered = p.packets + p.drops;
  return offered == 0 ? 0.0 : 1e6 * static_cast<double>(p.drops) / static_cast<double>(offered);
}

void to_proto(const PortStats& p, v1::PortQueueStats& out) {
  out.set_link(p.link);
  out.set_end(p.end);
  out.set_tier(p.tier);
  out.set_gbps(p.gbps);
  out.set_bytes(p.bytes);
  out.set_packets(p.packets);
  out.set_drops(p.drops);
  out.set_ecn_marks(p.ecn_marks);
  out.set_ecn_mark_ratio(ecn_mark_ratio(p));
  out.set_drops_ppm(drops_ppm(p));
  out.set_depth_p95_bytes(p.depth_p95_bytes);
  out.set_depth_max_bytes(p.depth_max_bytes);
  out.set_samples(p.samples);
  out.set_bin_seconds(p.bin_seconds);
  for (double u : p.utilization) out.add_utilization(u);
  if (!p.lossless) return;
  out.set_pfc_priority(p.pfc_priority);
  out.set_pause_frames(p.pause_frames);
  out.set_paused_ns(p.paused_ns);
  out.set_pause_frames_sent(p.pause_frames_sent);
  out.set_deadlocks(p.deadlocks);
  out.set_deadlocked_ns(p.deadlocked_ns);
  for (const PfcWatchdogEventStats& e : p.watchdog_events) {
    v1::PfcWatchdogEvent* w = out.add_watchdog_events();
    w->set_held_since_ns(static_cast<uint64_t>(e.held_since_ns));
    w->set_detected_ns(static_cast<uint64_t>(e.detected_ns));
    w->set_restored_ns(static_cast<uint64_t>(e.restored_ns));
  }
}

std::string port_queues_text(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    if (v.ports.empty()) continue;
    if (out.empty()) {
      out = "\nSwitch port queues (all repetitions; depth: worst repetition's p95, and max)\n";
      out += fmt::format("  {:<20} {:<22} {:<10} {:>14} {:>11} {:>9} {:>10} {:>9} {:>10} {:>11} {:>11}\n",
                         "variant", "port", "tier", "bytes", "packets", "drops", "ECN marks", "mark/pkt",
                         "drops ppm", "depth p95 B", "depth max B");
    }
    // Only ports that carried something or queued: an idle port says nothing.
    for (const PortStats& p : v.ports) {
      if (p.packets + p.drops > 0) out += text_row(v.name, port_label(p), p);
    }
    for (const PortStats& t : tier_totals(v.ports)) out += text_row(v.name, "all " + t.tier, t);
  }
  return out;
}

std::string port_queues_html(const Report& report, std::string (*escape)(const std::string&)) {
  std::string html;
  for (const VariantSummary& v : report.variants) {
    if (v.ports.empty()) continue;
    html += fmt::format("<h3>{}</h3>\n<table><tr><th>port</th><th>tier</th><th>Gbit/s</th><th>bytes</th>"
                        "<th>packets</th><th>drops</th><th>ECN marks</th><th>marks/packet</th>"
                        "<th>drops ppm</th><th>depth p95 (B)</th><th>depth max (B)</th>"
                        "<th>utilization over the run</th></tr>\n",
                        escape(v.name));
    auto row = [&](const std::string& label, const PortStats& p, bool heat) {
      std::string cells;
      if (heat) {
        // One cell per bin, darker the busier; the title gives the figure.
        for (double u : p.utilization) {
          const double shade = p.gbps > 0 ? std::clamp(u, 0.0, 1.0) : 0.0;
          cells += fmt::format("<span title=\"{:.0f}%\" style=\"display:inline-block;width:6px;height:14px;"
                               "background:rgba(200,30,30,{:.2f})\"></span>",
                               100 * u, shade);
        }
      }
      html += fmt::format("<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{:g}</td><td>{}</td>"
                          "<td>{}</td><td>{}</td><td>{}</td><td>{:.4f}</td><td>{:.0f}</td><td>{}</td>"
                          "<td>{}</td><td class=\"name\">{}</td></tr>\n",
                          escape(label), escape(p.tier), p.gbps, p.bytes, p.packets, p.drops, p.ecn_marks,
                          ecn_mark_ratio(p), drops_ppm(p), p.depth_p95_bytes, p.depth_max_bytes, cells);
    };
    for (const PortStats& p : v.ports) row(port_label(p), p, true);
    for (const PortStats& t : tier_totals(v.ports)) row("all " + t.tier, t, false);
    html += "</table>\n";
  }
  return html.empty() ? html : "<h2>Switch port queues</h2>\n" + html;
}

}  // namespace collide::orchestrator::report
