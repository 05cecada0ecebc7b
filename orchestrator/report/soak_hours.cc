#include "orchestrator/report/soak_hours.h"

#include <algorithm>

#include <fmt/format.h>

namespace collide::orchestrator::report {

void SoakHours::add(const RunLogEntry& run) {
  const bool started = run.started != std::chrono::system_clock::time_point{};
  if (started && !first_start_) first_start_ = run.started;
  uint32_t hour = last_hour_;
  if (started) {
    const auto since = std::max(run.started - *first_start_, std::chrono::system_clock::duration::zero());
    hour = static_cast<uint32_t>(since / hour_);
  }
  last_hour_ = hour;
  auto known = std::find(variants_.begin(), variants_.end(), run.variant);
  const size_t place = static_cast<size_t>(known - variants_.begin());
  if (known == variants_.end()) variants_.push_back(run.variant);
  Cell& cell = cells_[{hour, place}];
  SoakHourRow& row = cell.row;
  row.hour = hour;
  row.variant = run.variant;
  ++row.runs;
  if (run.failed) ++row.failed_runs;
  if (run.jct_s) cell.jct_s.add(*run.jct_s);
  if (run.p99_us) row.worst_p99_us = std::max(row.worst_p99_us, *run.p99_us);
  row.retransmitted_packets += run.retransmitted_packets;
  row.timeouts += run.timeouts;
}

std::vector<SoakHourRow> SoakHours::rows() const {
  std::vector<SoakHourRow> out;
  for (const auto& [key, cell] : cells_) {
    SoakHourRow row = cell.row;
    row.jct_p50_s = cell.jct_s.quantile(0.5);
    row.jct_p99_s = cell.jct_s.quantile(0.99);
    row.jct_max_s = cell.jct_s.max();
    const auto baseline = std::find(variants_.begin(), variants_.end(), "baseline");
    if (baseline != variants_.end() && row.variant != "baseline") {
      auto it = cells_.find({key.first, static_cast<size_t>(baseline - variants_.begin())});
      if (it != cells_.end() && it->second.jct_s.count() > 0 && cell.jct_s.count() > 0) {
        row.slowdown = row.jct_p50_s / it->second.jct_s.quantile(0.5);
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string soak_hours_table(const std::vector<SoakHourRow>& rows) {
  if (rows.empty()) return "";
  std::string out = "By hour of the soak\n";
  out += fmt::format("{:<8} {:<26} {:>5} {:>7} {:>12} {:>12} {:>12} {:>9} {:>15} {:>10} {:>9}\n", "hour", "variant",
                     "runs", "failed", "JCT p50 (s)", "JCT p99 (s)", "JCT max (s)", "slowdown", "worst p99 (us)",
                     "resent", "timeouts");
  for (const SoakHourRow& r : rows) {
    out += fmt::format("{:<8} {:<26} {:>5} {:>7} {:>12.4f} {:>12.4f} {:>12.4f} {:>9} {:>15.0f} {:>10} {:>9}\n",
                       fmt::format("{}h-{}h", r.hour, r.hour + 1), r.variant, r.runs, r.failed_runs, r.jct_p50_s,
                       r.jct_p99_s, r.jct_max_s, r.slowdown ? fmt::format("{:.2f}x", *r.slowdown) : "-",
                       r.worst_p99_us, r.retransmitted_packets, r.timeouts);
  }
  return out;
}

}  // namespace collide::orchestrator::report
