#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collide/results.pb.h"
#include "common/result.h"

// `collide compare`: two runs of a scenario (two switches, firmware versions, transports ...) side
// by side. Per variant and per collective kind and size, run B's median and p99 completion times
// against run A's as ratios B / A with confidence intervals that carry run-to-run variation, and a
// verdict; the same for the variant's JCT.
namespace collide::orchestrator::report {

// A run's results: `path` is report.json itself or the results directory `collide run` wrote it to.
Result<v1::Results> read_results(const std::string& path);

enum class CompareVerdict {
  kBetter,        // B's time is shorter than A's: the interval lies below 1
  kWorse,         // B's time is longer: the interval lies above 1
  kNoDifference,  // the interval holds 1
  kTooFewRuns,    // no interval: fewer than 2 repetitions on both sides, or 3 in all
};

const char* verdict_name(CompareVerdict v);

// B / A of a positive quantity measured once per repetition.
struct RatioInterval {
  double a = 0, b = 0;        // the geometric means over each side's repetitions
  double ratio = 0;           // b / a
  double low = 0, high = 0;   // the interval of the ratio at the chosen level; 0 without one
  double dof = 0;             // degrees of freedom of the t quantile used
  CompareVerdict verdict = CompareVerdict::kTooFewRuns;
};

// The interval of B / A from one value per repetition and side (each > 0). See compare.cc for why
// the repetition is the unit.
RatioInterval ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                             double level);

struct CompareRow {
  std::string kind;
  uint64_t size_bytes = 0;
  std::string type, redop;
  size_t repetitions_a = 0, repetitions_b = 0;  // repetitions with collectives of this row
  uint64_t count_a = 0, count_b = 0;            // collectives, over those repetitions
  bool sampled = false;                         // some repetition kept a sample, not every time
  RatioInterval p50, p99;                       // of each repetition's median and p99
};

struct RowKey {
  std::string kind;
  uint64_t size_bytes = 0;
  std::string type, redop;
};

struct VariantComparison {
  std::string name;
  bool in_a = false, in_b = false;  // a variant of one run only has nothing compared
  uint32_t completed_a = 0, completed_b = 0;  // repetitions that completed
  RatioInterval jct;                // seconds
  // Each repetition's JCT over the JCT of its run's baseline in the same repetition (which ran
  // just before it), B / A: load on the machine that lasted through a repetition, or through a
  // whole run, cancels. Absent for the baseline and when a run has none.
  bool has_slowdown = false;
  RatioInterval slowdown;
  std::vector<CompareRow> rows;
  std::vector<RowKey> rows_only_in_a, rows_only_in_b;
  bool without_collective_times = false;  // a side's report.json predates per-repetition times
};

struct Comparison {
  std::string a_label, b_label;
  double level = 0.95;
  std::vector<VariantComparison> variants;  // A's order, then variants of B only
};

Comparison compare_results(const v1::Results& a, const v1::Results& b, double level,
                           const std::string& a_label, const std::string& b_label);

}  // namespace collide::orchestrator::report
