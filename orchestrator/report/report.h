#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collide/results.pb.h"
#include "orchestrator/report/collective_samples.h"
#include "orchestrator/report/collective_tally.h"
#include "orchestrator/report/collective_times.h"
#include "orchestrator/report/ecmp_balance.h"
#include "orchestrator/report/fabric_traffic.h"
#include "orchestrator/report/job_results.h"
#include "orchestrator/report/port_queues.h"
#include "orchestrator/report/run_result.h"
#include "orchestrator/report/soak_hours.h"
#include "orchestrator/report/statistics.h"

// The answer to "what did this fault do to my job": per variant, job completion time and its
// slowdown against the baseline (with 95% confidence intervals over repetitions), the tail of
// collective completion times, an nccl-tests-style table per collective size, retransmissions
// and timeouts, and what the injectors really did.
namespace collide::orchestrator::report {

struct SizeRow {
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  uint64_t bytes = 0;        // nccl-tests' size S
  v1::DataType datatype = v1::DATA_TYPE_UNSPECIFIED;
  v1::ReduceOp reduce_op = v1::REDUCE_OP_UNSPECIFIED;
  uint64_t count = 0;        // collectives of this kind and size, over all repetitions
  double p50_us = 0, p99_us = 0, max_us = 0;
  double algbw_gbytes = 0;   // S / p50 time, GB/s (1e9 bytes)
  double busbw_gbytes = 0;
};

// Production beside replay for one collective kind: the same collectives' times in the job the
// trace was measured in and in this variant's replays, for the collectives whose trace carries a
// production time (NCCL Inspector, Flight Recorder and Kineto traces do).
struct ProductionRow {
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  uint64_t count = 0;  // collectives compared, over all repetitions
  double production_p50_us = 0, production_p99_us = 0;
  double replay_p50_us = 0, replay_p99_us = 0;
};

// One repetition of a variant: its JCT and that of each training iteration.
struct RepetitionSummary {
  uint32_t repetition = 0;
  bool failed = false;
  std::string failure;
  double jct_seconds = 0;
  std::vector<double> iteration_seconds;
  std::vector<FaultWindow> faults;  // windows relative to the run's first op
  std::vector<FabricLink> fabric_links;  // a virtual testbed's links over the run
  FabricTotals fabric;
  std::vector<v1::NicTraffic> nics;
  std::vector<CollectiveSamples> collective_samples;  // per kind and size, for `collide compare`
  EcmpBalance ecmp;  // how evenly the fabric's equal-cost links shared the run's bytes
  std::vector<PortStats> ports;
};

struct VariantSummary {
  std::string name;
  uint32_t runs = 0;
  uint32_t failed_runs = 0;
  std::vector<std::string> failures;
  std::vector<double> jct_seconds;       // one per repetition that completed
  MeanInterval jct;                      // seconds; the interval is the geometric mean's
  MeanInterval slowdown;                 // JCT / mean baseline JCT; empty without a baseline
  // Every collective's completion time, all repetitions; past ReportLimits::collective_times, 1000
  // quantiles of them (what a CDF needs).
  std::vector<double> collective_us;
  uint64_t collective_count = 0;         // collectives measured
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  std::vector<SizeRow> sizes;
  std::vector<ProductionRow> production;  // by kind; empty when the trace measured none
  uint64_t packets_sent = 0;
  uint64_t retransmitted_packets = 0;
  uint64_t timeouts = 0;
  // Data packets the NICs received, and those beyond a hole in their QP's PSNs (all repetitions).
  uint64_t packets_received = 0;
  uint64_t out_of_order_packets = 0;
  // The hosts' NICs' PFC (all repetitions): pause frames received, the time they held sending,
  // pause frames sent.
  uint64_t nic_pause_frames = 0;
  uint64_t nic_paused_ns = 0;
  uint64_t nic_pause_frames_sent = 0;
  uint64_t nic_rx_buffer_dropped = 0;  // dropped by NICs whose buffer a slow receiver filled
  double out_of_order_rate() const {
    return packets_received == 0 ? 0.0
                                 : static_cast<double>(out_of_order_packets) / static_cast<double>(packets_received);
  }
  std::vector<FaultWindow> faults;       // ground truth, summed over repetitions
  std::vector<RepetitionSummary> repetitions;
  FabricTotals fabric;                   // summed over repetitions
  EcmpBalance ecmp;                      // the mean over repetitions
  std::vector<PortStats> ports;          // over repetitions (port_queues.h: PortMerge)
  std::vector<v1::JobResults> jobs;      // several jobs at once: each job's own JCT
  Roofline roofline;                     // the job's on the variant's fabric; unknown: seconds 0
  double jct_roofline_ratio = 0;         // mean JCT / roofline; 0 when either is unknown
};

struct Report {
  std::string scenario;
  std::string description;
  std::vector<v1::SweepSetting> sweep_point;  // the sweep's point these runs ran at; empty: no sweep
  std::vector<VariantSummary> variants;  // the baseline first when there is one
  std::vector<v1::JobInterference> interference;  // several jobs with runs.alone
  std::vector<SoakHourRow> hours;  // a soak's runs by hour (soak_hours.h); empty otherwise
};

// `jobs`: several jobs at once (job_results.h), whose own JCTs go into each variant.
Report build_report(const std::string& scenario, const std::vector<RunResult>& runs,
                    const std::vector<JobRanks>& jobs = {});

// What a report keeps of each run, so that a soak's report holds the same memory after 8 hours as
// after 8 minutes (but for each run's JCT, 8 bytes).
struct ReportLimits {
  // Repetitions per variant listed with every detail (links, NICs, ports, fault windows,
  // collective-time samples for `collide compare`); later runs add up into the variant's totals,
  // JCTs and completion-time tallies only (runs.jsonl has a line for each).
  size_t detailed_repetitions = SIZE_MAX;
  // Completion times per variant kept exactly; past it, streaming histograms (collective_tally.h).
  size_t collective_times = SIZE_MAX;
  // Failed runs per variant whose failure the report spells out (runs.jsonl has every one).
  size_t failures = SIZE_MAX;
};
// A soak's (runs.duration_ns): 10 iterations in detail, 4096 completion times per variant exact
// (the CDF in the HTML report draws each), failures of 100 runs per variant spelled out.
inline constexpr ReportLimits kSoakReportLimits{10, 4096, 100};

// build_report, fed one run at a time as runs end: nothing of a run is kept past add() beyond
// what the limits allow.
class ReportBuilder {
 public:
  explicit ReportBuilder(std::string scenario, ReportLimits limits = {});
  ~ReportBuilder();
  ReportBuilder(ReportBuilder&&) = default;

  void add(const RunResult& run);
  // `runs`: for several jobs at once, whose per-job results read every run.
  Report finish(const std::vector<JobRanks>& jobs = {}, const std::vector<RunResult>& runs = {}) &&;

 private:
  struct VariantState {
    explicit VariantState(size_t exact_times) : collectives(exact_times) {}
    VariantSummary summary;
    CollectiveTally collectives;
    EcmpMean ecmp;
    PortMerge ports;
  };
  std::string scenario_;
  ReportLimits limits_;
  std::vector<std::string> order_;  // variants in the order their first run ended
  std::map<std::string, VariantState> variants_;
};

// The report as its schema (proto/collide/results.proto) and as that schema's canonical JSON,
// which is what report.json holds.
v1::Results to_results(const Report& report);
std::string results_json(const Report& report);
// The same JSON, parsed, for code that reads fields.
nlohmann::json report_json(const Report& report);

// nccl-tests' table layout: size, count, type, redop, time p50/p99/max (us), algbw, busbw (GB/s).
std::string size_table(const VariantSummary& variant);

// Production against replay per collective kind: kind, collectives, production p50/p99 (us),
// replay p50/p99 (us), replay p50 / production p50. Empty when the variant has no such rows.
std::string production_table(const VariantSummary& variant);

}  // namespace collide::orchestrator::report
