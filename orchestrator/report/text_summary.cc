#include "orchestrator/report/text_summary.h"

#include <fmt/format.h>

#include "orchestrator/report/host_flow_control.h"
#include "orchestrator/report/out_of_order.h"
#include "orchestrator/report/ecmp_table.h"
#include "orchestrator/report/roofline_table.h"
#include "orchestrator/report/port_pfc.h"
#include "orchestrator/report/port_queues.h"

namespace collide::orchestrator::report {
namespace {

std::string slowdown_text(const VariantSummary& v) {
  if (v.slowdown.n == 0) return "-";
  return fmt::format("{:.2f}x ({:.2f}..{:.2f})", v.slowdown.mean, v.slowdown.low, v.slowdown.high);
}

// Mean JCT of each iteration over the completed repetitions: where in the job the time went.
std::string iteration_means(const VariantSummary& v) {
  std::vector<double> sum;
  std::vector<uint32_t> n;
  for (const RepetitionSummary& r : v.repetitions) {
    if (r.failed) continue;
    if (sum.size() < r.iteration_seconds.size()) {
      sum.resize(r.iteration_seconds.size(), 0);
      n.resize(r.iteration_seconds.size(), 0);
    }
    for (size_t i = 0; i < r.iteration_seconds.size(); ++i) {
      sum[i] += r.iteration_seconds[i];
      ++n[i];
    }
  }
  if (sum.size() < 2) return "";  // one iteration: the JCT says it all
  std::string out;
  for (size_t i = 0; i < sum.size(); ++i) {
    out += fmt::format("{}{:.4f}", i == 0 ? "" : " ", n[i] > 0 ? sum[i] / n[i] : 0.0);
  }
  return out;
}

}  // namespace

std::string size_tables(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    out += size_table(v) + "\n";
    if (!v.production.empty()) out += production_table(v) + "\n";
  }
  return out;
}

std::string jct_table(const Report& report) {
  std::string out = fmt::format("{:<26} {:>5} {:>7} {:>10} {:>19} {:>22} {:>10} {:>10} {:>10} {:>9}\n",
                                "variant", "runs", "failed", "JCT (s)", "JCT 95% CI (s)",
                                "slowdown (95% CI)", "p50 (us)", "p99 (us)", "resent", "timeouts");
  for (const VariantSummary& v : report.variants) {
    out += fmt::format("{:<26} {:>5} {:>7} {:>10.4f} {:>19} {:>22} {:>10.0f} {:>10.0f} {:>10} {:>9}\n",
                       v.name, v.runs, v.failed_runs, v.jct.mean,
                       fmt::format("{:.4f}..{:.4f}", v.jct.low, v.jct.high), slowdown_text(v),
                       v.p50_us, v.p99_us, v.retransmitted_packets, v.timeouts);
  }
  bool any_iterations = false;
  for (const VariantSummary& v : report.variants) {
    const std::string its = iteration_means(v);
    if (its.empty()) continue;
    if (!any_iterations) out += "\nJCT per iteration (s, mean over repetitions):\n";
    any_iterations = true;
    out += fmt::format("  {:<24} {}\n", v.name, its);
  }
  for (const VariantSummary& v : report.variants) {
    for (const std::string& f : v.failures) out += fmt::format("  {} failed {}\n", v.name, f);
  }
  return out;
}

std::string fabric_table(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    if (v.fabric.empty()) continue;
    if (out.empty()) {
      out = "\nFabric: bytes through the switches' ports (all repetitions; from/to the hosts below a "
            "leaf, the leaves below a spine, the spines above a leaf; 3-tier: the super-spines above a "
            "spine, the spines below a super-spine)\n";
      out += fmt::format("  {:<26} {:<8} {:>5} {:>14} {:>14} {:>14} {:>14}\n", "variant", "switch", "rail",
                         "from below", "to below", "from above", "to above");
    }
    for (const SwitchTraffic& s : v.fabric.leaves) {
      out += fmt::format("  {:<26} {:<8} {:>5} {:>14} {:>14} {:>14} {:>14}\n", v.name, s.name, s.rail,
                         s.bytes_from_below, s.bytes_to_below, s.bytes_from_above, s.bytes_to_above);
    }
    const bool three_tier = !v.fabric.super_spines.empty();
    for (const SwitchTraffic& s : v.fabric.spines) {
      out += fmt::format("  {:<26} {:<8} {:>5} {:>14} {:>14} {:>14} {:>14}\n", v.name, s.name, "-",
                         s.bytes_from_below, s.bytes_to_below,
                         three_tier ? std::to_string(s.bytes_from_above) : "-",
                         three_tier ? std::to_string(s.bytes_to_above) : "-");
    }
    for (const SwitchTraffic& s : v.fabric.super_spines) {
      out += fmt::format("  {:<26} {:<8} {:>5} {:>14} {:>14} {:>14} {:>14}\n", v.name, s.name, "-",
                         s.bytes_from_below, s.bytes_to_below, "-", "-");
    }
  }
  for (const VariantSummary& v : report.variants) {
    if (const uint64_t drops = v.fabric.host_ring_drops(); drops > 0) {
      out += fmt::format("  {}: {} frames dropped by leaf ports because a host's receive ring was full: the "
                         "hosts lost them, not the fabric (too few cores for their NIC engines), and the "
                         "resends they caused count in this variant's results\n",
                         v.name, drops);
    }
  }
  return out;
}

// A link failure's phases (detection, convergence, converged) in each variant's first repetition:
// how long each held and the packets it lost.
std::string link_failure_text(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    if (v.repetitions.empty()) continue;
    for (const FaultWindow& f : v.repetitions.front().faults) {
      if (f.kind.rfind("link-failure-", 0) != 0) continue;
      if (out.empty()) {
        out = fmt::format("\nLink failure phases (first repetition):\n  {:<26} {:<36} {:>10} {:>13}\n", "variant",
                          "phase", "held (ms)", "packets lost");
      }
      const double held_ms = f.end_ns > f.start_ns ? static_cast<double>(f.end_ns - f.start_ns) / 1e6 : 0;
      out += fmt::format("  {:<26} {:<36} {:>10.1f} {:>13}\n", v.name, f.name, held_ms, f.packets_acted);
    }
  }
  return out;
}

std::string run_summary(const Report& report, const std::string& html_path,
                        const std::string& json_path) {
  std::string out = size_tables(report) + jct_table(report) + jobs_text(report) + out_of_order_text(report) +
                    host_flow_control_text(report) + fabric_table(report) + roofline_table(report) + ecmp_table(report) +
                    port_queues_text(report) + port_pfc_text(report) + link_failure_text(report);
  if (!report.hours.empty()) out += "\n" + soak_hours_table(report.hours);
  if (!html_path.empty() || !json_path.empty()) out += "\n";
  if (!html_path.empty()) out += "report: " + html_path + "\n";
  if (!json_path.empty()) out += (html_path.empty() ? "report: " : "        ") + json_path + "\n";
  return out;
}

}  // namespace collide::orchestrator::report
