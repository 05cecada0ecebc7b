#include "orchestrator/report/report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "replayer/collectives/accounting.h"
#include "traces/op_types.h"

namespace collide::orchestrator::report {
namespace {

namespace coll = replayer::collectives;

void summarize_sizes(VariantSummary& v, const std::vector<CollectiveTime>& all) {
  std::map<std::tuple<int, uint64_t, uint32_t>, std::vector<double>> groups;
  for (const CollectiveTime& c : all) {
    if (c.failed) continue;
    groups[{c.kind, c.bytes, c.comm_size}].push_back(c.seconds() * 1e6);
  }
  for (auto& [key, times] : groups) {
    const auto& [kind, bytes, n] = key;
    SizeRow row;
    row.kind = static_cast<v1::OpKind>(kind);
    row.bytes = coll::nccl_tests_size(row.kind, n, bytes);
    row.count = times.size();
    row.p50_us = quantile(times, 0.5);
    row.p99_us = quantile(times, 0.99);
    row.max_us = quantile(times, 1.0);
    row.algbw_gbytes = row.p50_us > 0 ? static_cast<double>(row.bytes) / (row.p50_us * 1e3) : 0;
    row.busbw_gbytes = row.algbw_gbytes * coll::busbw_factor(row.kind, n);
    v.sizes.push_back(row);
  }
}

}  // namespace

Report build_report(const std::string& scenario, const std::vector<RunResult>& runs) {
  Report report;
  report.scenario = scenario;
  std::vector<std::string> order;
  std::map<std::string, VariantSummary> by_name;
  std::map<std::string, std::vector<CollectiveTime>> collectives;
  for (const RunResult& run : runs) {
    if (!by_name.count(run.variant)) order.push_back(run.variant);
    VariantSummary& v = by_name[run.variant];
    v.name = run.variant;
    ++v.runs;
    v.packets_sent += run.packets_sent;
    v.retransmitted_packets += run.retransmitted_packets;
    v.timeouts += run.timeouts;
    for (const FaultWindow& f : run.faults) {
      auto it = std::find_if(v.faults.begin(), v.faults.end(),
                             [&](const FaultWindow& g) { return g.name == f.name; });
      if (it == v.faults.end()) {
        v.faults.push_back(f);
      } else {
        it->packets_matched += f.packets_matched;
        it->packets_acted += f.packets_acted;
      }
    }
    if (run.failed) {
      ++v.failed_runs;
      v.failures.push_back(fmt::format("repetition {}: {}", run.repetition, run.failure));
      continue;
    }
    v.jct_seconds.push_back(static_cast<double>(job_completion_ns(run)) / 1e9);
    for (CollectiveTime& c : collective_times(run)) collectives[run.variant].push_back(std::move(c));
  }
  // The baseline leads, so others compare against it.
  std::stable_partition(order.begin(), order.end(), [](const std::string& n) { return n == "baseline"; });
  double baseline_jct = 0;
  if (by_name.count("baseline")) {
    baseline_jct = mean_with_interval(by_name["baseline"].jct_seconds).mean;
  }
  for (const std::string& name : order) {
    VariantSummary& v = by_name[name];
    v.jct = mean_with_interval(v.jct_seconds);
    if (baseline_jct > 0) {
      std::vector<double> ratios;
      for (double j : v.jct_seconds) ratios.push_back(j / baseline_jct);
      v.slowdown = mean_with_interval(ratios);
    }
    for (const CollectiveTime& c : collectives[name]) {
      if (!c.failed) v.collective_us.push_back(c.seconds() * 1e6);
    }
    v.p50_us = quantile(v.collective_us, 0.5);
    v.p99_us = quantile(v.collective_us, 0.99);
    v.p999_us = quantile(v.collective_us, 0.999);
    v.max_us = quantile(v.collective_us, 1.0);
    summarize_sizes(v, collectives[name]);
    report.variants.push_back(std::move(v));
  }
  return report;
}

nlohmann::json report_json(const Report& report) {
  nlohmann::json variants = nlohmann::json::array();
  for (const VariantSummary& v : report.variants) {
    nlohmann::json sizes = nlohmann::json::array();
    for (const SizeRow& r : v.sizes) {
      sizes.push_back({{"kind", std::string(traces::op_kind_name(r.kind))},
                       {"size_bytes", r.bytes},   {"count", r.count},
                       {"time_p50_us", r.p50_us}, {"time_p99_us", r.p99_us},
                       {"time_max_us", r.max_us}, {"algbw_GBps", r.algbw_gbytes},
                       {"busbw_GBps", r.busbw_gbytes}});
    }
    nlohmann::json faults = nlohmann::json::array();
    for (const FaultWindow& f : v.faults) {
      faults.push_back({{"name", f.name}, {"kind", f.kind}, {"packets_matched", f.packets_matched},
                        {"packets_acted", f.packets_acted}});
    }
    variants.push_back({
        {"name", v.name},
        {"runs", v.runs},
        {"failed_runs", v.failed_runs},
        {"failures", v.failures},
        {"jct_seconds", v.jct_seconds},
        {"jct_mean_seconds", v.jct.mean},
        {"jct_ci95_seconds", {v.jct.low, v.jct.high}},
        {"slowdown_mean", v.slowdown.mean},
        {"slowdown_ci95", {v.slowdown.low, v.slowdown.high}},
        {"collective_time_us", {{"p50", v.p50_us}, {"p99", v.p99_us}, {"p999", v.p999_us},
                                {"max", v.max_us}, {"count", v.collective_us.size()}}},
        {"sizes", sizes},
        {"packets_sent", v.packets_sent},
        {"retransmitted_packets", v.retransmitted_packets},
        {"timeouts", v.timeouts},
        {"faults", faults},
    });
  }
  return {{"scenario", report.scenario}, {"variants", variants}};
}

std::string size_table(const VariantSummary& v) {
  std::string out = fmt::format("# {}: {} runs, {} failed\n", v.name, v.runs, v.failed_runs);
  out += fmt::format("# {:>12} {:>8} {:>15} | {:>10} {:>10} {:>10} {:>8} {:>8}\n", "size(B)",
                     "count", "type", "p50(us)", "p99(us)", "max(us)", "algbw", "busbw");
  for (const SizeRow& r : v.sizes) {
    out += fmt::format("  {:>12} {:>8} {:>15} | {:>10.1f} {:>10.1f} {:>10.1f} {:>8.2f} {:>8.2f}\n",
                       r.bytes, r.count, traces::op_kind_name(r.kind), r.p50_us, r.p99_us,
                       r.max_us, r.algbw_gbytes, r.busbw_gbytes);
  }
  return out;
}

}  // namespace collide::orchestrator::report
