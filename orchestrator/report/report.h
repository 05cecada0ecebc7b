#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "orchestrator/report/collective_times.h"
#include "orchestrator/report/run_result.h"
#include "orchestrator/report/statistics.h"

// The answer to "what did this fault do to my job": per variant, job completion time and its
// slowdown against the baseline (with 95% confidence intervals over repetitions), the tail of
// collective completion times, an nccl-tests-style table per collective size, retransmissions
// and timeouts, and what the injectors really did.
namespace collide::orchestrator::report {

struct SizeRow {
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  uint64_t bytes = 0;        // nccl-tests' size S
  uint64_t count = 0;        // collectives of this kind and size, over all repetitions
  double p50_us = 0, p99_us = 0, max_us = 0;
  double algbw_gbytes = 0;   // S / p50 time, GB/s (1e9 bytes)
  double busbw_gbytes = 0;
};

struct VariantSummary {
  std::string name;
  uint32_t runs = 0;
  uint32_t failed_runs = 0;
  std::vector<std::string> failures;
  std::vector<double> jct_seconds;       // one per repetition that completed
  MeanInterval jct;                      // seconds
  MeanInterval slowdown;                 // JCT / mean baseline JCT; empty without a baseline
  std::vector<double> collective_us;     // every collective's completion time, all repetitions
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  std::vector<SizeRow> sizes;
  uint64_t packets_sent = 0;
  uint64_t retransmitted_packets = 0;
  uint64_t timeouts = 0;
  std::vector<FaultWindow> faults;       // ground truth, summed over repetitions
};

struct Report {
  std::string scenario;
  std::vector<VariantSummary> variants;  // the baseline first when there is one
};

Report build_report(const std::string& scenario, const std::vector<RunResult>& runs);
nlohmann::json report_json(const Report& report);
// nccl-tests' table layout: size, count, type, time p50/p99/max (us), algbw, busbw (GB/s).
std::string size_table(const VariantSummary& variant);

}  // namespace collide::orchestrator::report
