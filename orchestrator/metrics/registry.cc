#include "orchestrator/metrics/registry.h"

#include <algorithm>
#include <chrono>
#include <string_view>

namespace collide::orchestrator::metrics {
namespace {

struct FamilySpec {
  std::string_view name;
  std::string_view help;
  std::string_view type;
};

// Every family collide exports; exported_series() and the constructor both read this table, so
// what a dashboard may query is what is registered.
constexpr FamilySpec kPacketsSent{"collide_packets_sent_total", "RoCE packets the host's ranks sent", "counter"};
constexpr FamilySpec kRetransmitted{"collide_retransmitted_packets_total", "RoCE packets the host's ranks sent again",
                                    "counter"};
constexpr FamilySpec kOpsCompleted{"collide_ops_completed_total", "collectives the host's ranks completed", "counter"};
constexpr FamilySpec kTimeouts{"collide_timeouts_total", "retransmission timeouts of the host's queue pairs",
                               "counter"};
constexpr FamilySpec kRuns{"collide_runs_total", "runs (repetitions of a variant) that ended, by outcome", "counter"};
constexpr FamilySpec kFaultPackets{"collide_fault_packets_acted_total",
                                   "packets a fault acted on (dropped, corrupted, delayed...)", "counter"};
constexpr FamilySpec kFaultHeld{"collide_fault_held_seconds_total",
                                "seconds a timed fault really held (0 for one armed for the whole run)", "counter"};
constexpr FamilySpec kRepetition{"collide_repetition", "the repetition of the variant running or last run (from 0)",
                                 "gauge"};
constexpr FamilySpec kElapsed{"collide_run_elapsed_seconds", "seconds the host's current run has been going",
                              "gauge"};
constexpr FamilySpec kCollectiveSeconds{"collide_collective_seconds",
                                        "completion time of each collective of each rank", "histogram"};
constexpr FamilySpec kJct{"collide_jct_seconds",
                          "job completion time of each run that completed: quantiles over the last 10 minutes",
                          "summary"};
constexpr FamilySpec kCollectiveQuantiles{
    "collide_collective_completion_seconds",
    "completion time of each collective of each rank: quantiles over the last 10 minutes", "summary"};
constexpr FamilySpec kAll[] = {kPacketsSent, kRetransmitted,     kOpsCompleted, kTimeouts,
                               kRuns,        kFaultPackets,      kFaultHeld,    kRepetition,
                               kElapsed,     kCollectiveSeconds, kJct,          kCollectiveQuantiles};

// Live quantiles, as a soak's dashboard shows them: over a sliding window (10 minutes, in 5 steps,
// so that a change shows within about 2 minutes), each within its rank error (CKMS: memory stays
// bounded however long the soak).
constexpr std::chrono::minutes kQuantileWindow{10};
constexpr int kQuantileWindowSteps = 5;
const prometheus::Summary::Quantiles& jct_quantiles() {
  static const prometheus::Summary::Quantiles q = {{0.5, 0.05}, {0.9, 0.01}, {0.99, 0.001}};
  return q;
}
const prometheus::Summary::Quantiles& collective_quantiles() {
  static const prometheus::Summary::Quantiles q = {{0.5, 0.05}, {0.99, 0.001}, {0.999, 0.0001}};
  return q;
}

// Collectives take from microseconds (small ones on loopback) to minutes (a flapping link under
// go-back-N): powers of two from 10 us to about 84 s.
prometheus::Histogram::BucketBoundaries collective_buckets() {
  prometheus::Histogram::BucketBoundaries bounds;
  for (double b = 1e-5; b < 100; b *= 2) bounds.push_back(b);
  return bounds;
}

template <typename Builder>
auto& build(Builder builder, const FamilySpec& spec, prometheus::Registry& registry) {
  return builder.Name(std::string(spec.name)).Help(std::string(spec.help)).Register(registry);
}

prometheus::Labels host_labels(const std::string& variant, uint32_t host) {
  return {{"variant", variant}, {"host", std::to_string(host)}};
}

// What a running total adds since it was last seen; never negative, so a counter cannot drop.
double growth(uint64_t now, uint64_t before) { return now > before ? static_cast<double>(now - before) : 0.0; }

}  // namespace

Registry::Registry()
    : registry_(std::make_shared<prometheus::Registry>()),
      packets_sent_(build(prometheus::BuildCounter(), kPacketsSent, *registry_)),
      retransmitted_(build(prometheus::BuildCounter(), kRetransmitted, *registry_)),
      ops_completed_(build(prometheus::BuildCounter(), kOpsCompleted, *registry_)),
      timeouts_(build(prometheus::BuildCounter(), kTimeouts, *registry_)),
      runs_(build(prometheus::BuildCounter(), kRuns, *registry_)),
      fault_packets_(build(prometheus::BuildCounter(), kFaultPackets, *registry_)),
      fault_held_(build(prometheus::BuildCounter(), kFaultHeld, *registry_)),
      repetition_(build(prometheus::BuildGauge(), kRepetition, *registry_)),
      elapsed_(build(prometheus::BuildGauge(), kElapsed, *registry_)),
      collective_seconds_(build(prometheus::BuildHistogram(), kCollectiveSeconds, *registry_)),
      jct_(build(prometheus::BuildSummary(), kJct, *registry_)),
      collective_quantiles_(build(prometheus::BuildSummary(), kCollectiveQuantiles, *registry_)) {}

void Registry::run_started(const std::string& variant, uint32_t repetition) {
  std::lock_guard lock(mutex_);
  repetition_.Add({{"variant", variant}}).Set(repetition);
  std::erase_if(seen_in_run_, [&](const auto& seen) { return seen.first.first == variant; });
}

void Registry::host_progress(const std::string& variant, uint32_t host, const HostTotals& so_far,
                             double elapsed_s) {
  std::lock_guard lock(mutex_);
  const prometheus::Labels labels = host_labels(variant, host);
  HostTotals& seen = seen_in_run_[{variant, host}];
  packets_sent_.Add(labels).Increment(growth(so_far.packets_sent, seen.packets_sent));
  retransmitted_.Add(labels).Increment(growth(so_far.retransmitted_packets, seen.retransmitted_packets));
  ops_completed_.Add(labels).Increment(growth(so_far.ops_completed, seen.ops_completed));
  elapsed_.Add(labels).Set(elapsed_s);
  seen.packets_sent = std::max(seen.packets_sent, so_far.packets_sent);
  seen.retransmitted_packets = std::max(seen.retransmitted_packets, so_far.retransmitted_packets);
  seen.ops_completed = std::max(seen.ops_completed, so_far.ops_completed);
}

void Registry::host_timeouts(const std::string& variant, uint32_t host, uint64_t timeouts) {
  timeouts_.Add(host_labels(variant, host)).Increment(static_cast<double>(timeouts));
}

void Registry::collective_completed(const std::string& variant, const std::string& kind, double seconds) {
  static const prometheus::Histogram::BucketBoundaries buckets = collective_buckets();
  const prometheus::Labels labels = {{"variant", variant}, {"kind", kind}};
  collective_seconds_.Add(labels, buckets).Observe(seconds);
  collective_quantiles_.Add(labels, collective_quantiles(), kQuantileWindow, kQuantileWindowSteps).Observe(seconds);
}

void Registry::job_completed(const std::string& variant, double seconds) {
  jct_.Add({{"variant", variant}}, jct_quantiles(), kQuantileWindow, kQuantileWindowSteps).Observe(seconds);
}

void Registry::fault_acted(const std::string& variant, const std::string& fault, uint64_t packets, double held_s) {
  const prometheus::Labels labels = {{"variant", variant}, {"fault", fault}};
  fault_packets_.Add(labels).Increment(static_cast<double>(packets));
  fault_held_.Add(labels).Increment(held_s);
}

void Registry::run_ended(const std::string& variant, bool failed) {
  runs_.Add({{"variant", variant}, {"outcome", failed ? "failed" : "ok"}}).Increment();
}

std::vector<ExportedSeries> Registry::exported_series() {
  std::vector<ExportedSeries> out;
  for (const FamilySpec& f : kAll) {
    const std::string name(f.name), type(f.type);
    if (type == "histogram") {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) out.push_back({name + suffix, type});
    } else if (type == "summary") {
      for (const char* suffix : {"", "_sum", "_count"}) out.push_back({name + suffix, type});
    } else {
      out.push_back({name, type});
    }
  }
  return out;
}

}  // namespace collide::orchestrator::metrics
