#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/report/log_histogram.h"
#include "orchestrator/report/run_log.h"

// A soak's runs summarized by hour of the soak (counted from its first run's start), per variant:
// what an engineer reads the morning after an 8-hour soak to see whether the job got worse as
// the night went on. Fed one run at a time as the soak goes; its size grows with the hours, not
// with the runs (JCTs go into streaming histograms).
namespace collide::orchestrator::report {

struct SoakHourRow {
  uint32_t hour = 0;  // from 0: the first hour of the soak
  std::string variant;
  uint32_t runs = 0;
  uint32_t failed_runs = 0;
  // Of the runs that completed (0 without any).
  double jct_p50_s = 0, jct_p99_s = 0, jct_max_s = 0;
  // This hour's median JCT over the baseline's median JCT in the same hour; none for the
  // baseline itself or when the hour has no completed baseline run.
  std::optional<double> slowdown;
  double worst_p99_us = 0;  // the highest collective p99 of any run in the hour
  uint64_t retransmitted_packets = 0;
  uint64_t timeouts = 0;
};

class SoakHours {
 public:
  // `hour`: the width of a row (an hour; tests use less).
  explicit SoakHours(std::chrono::nanoseconds hour = std::chrono::hours(1)) : hour_(hour) {}

  // A finished run, as its runs.jsonl line has it. A run never started (no start time) counts in
  // the hour of the run before it.
  void add(const RunLogEntry& run);

  // By hour, then by variant in the order they first ran (the baseline first, as it runs first).
  std::vector<SoakHourRow> rows() const;

 private:
  struct Cell {
    SoakHourRow row;
    LogHistogram jct_s;
  };
  std::chrono::nanoseconds hour_;
  std::optional<std::chrono::system_clock::time_point> first_start_;
  uint32_t last_hour_ = 0;
  std::vector<std::string> variants_;                      // in the order first seen
  std::map<std::pair<uint32_t, size_t>, Cell> cells_;      // (hour, variant's place) -> its runs
};

// The rows as a text table, an hour a block ("By hour of the soak"); "" without rows.
std::string soak_hours_table(const std::vector<SoakHourRow>& rows);

}  // namespace collide::orchestrator::report
