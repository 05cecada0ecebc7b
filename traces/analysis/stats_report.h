#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "traces/analysis/trace_stats.h"

// How `collide trace stats` shows statistics: a table for people (GB = 1e9 bytes, each traffic
// column named by its model) and JSON with exact byte counts for programs.
namespace collide::traces::analysis {

struct StatsReportOptions {
  std::optional<uint64_t> minibatches_per_epoch;  // adds the epoch projection
  uint32_t max_iteration_rows = 20;               // the table's per-iteration rows (JSON: all)
  uint32_t max_communicator_rows = 50;            // the table's per-communicator rows (JSON: all)
};

std::string stats_table(const TraceStats& stats, const StatsReportOptions& options);
nlohmann::json stats_json(const TraceStats& stats, const StatsReportOptions& options);

}  // namespace collide::traces::analysis
