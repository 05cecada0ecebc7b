#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>

// The live metrics of a run, as a Prometheus endpoint serves them during long soak runs. The
// runner reports what agents tell it; counters only ever grow, over every repetition, variant and
// sweep point of the process (a scraper's rate() reads a drop as a restart), and what belongs to
// one repetition is a gauge.
namespace collide::orchestrator::metrics {

// What one host's ranks have done so far in the current run (agents report running totals).
struct HostTotals {
  uint64_t packets_sent = 0;
  uint64_t retransmitted_packets = 0;
  uint64_t ops_completed = 0;
};

// One series name a scrape can show, with its family's type; a histogram's family shows as its
// _bucket, _sum and _count series, a summary's as itself (one series per quantile), _sum and _count.
struct ExportedSeries {
  std::string name;
  std::string type;  // "counter", "gauge", "histogram" or "summary"
};

class Registry {
 public:
  Registry();

  // A run (one repetition of a variant) starts: its hosts' running totals begin again at zero.
  void run_started(const std::string& variant, uint32_t repetition);
  // A host's running totals in the current run of `variant`; the counters grow by what is new
  // since the last report of that host in that run.
  void host_progress(const std::string& variant, uint32_t host, const HostTotals& so_far, double elapsed_s);
  // A host's retransmission timeouts over a run, reported once at its end.
  void host_timeouts(const std::string& variant, uint32_t host, uint64_t timeouts);
  // One collective's completion time, when its run ended.
  void collective_completed(const std::string& variant, const std::string& kind, double seconds);
  // A run's job completion time, when it completed.
  void job_completed(const std::string& variant, double seconds);
  // What an armed fault did over a run: packets it acted on and how long it held.
  void fault_acted(const std::string& variant, const std::string& fault, uint64_t packets, double held_s);
  void run_ended(const std::string& variant, bool failed);

  // The series a scrape can show, from the families declared here (whether or not they have a
  // value yet): what a dashboard may query.
  static std::vector<ExportedSeries> exported_series();

  // What the endpoint serves.
  std::shared_ptr<prometheus::Registry> prometheus() const { return registry_; }

 private:
  using Key = std::pair<std::string, uint32_t>;  // variant, host

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& packets_sent_;
  prometheus::Family<prometheus::Counter>& retransmitted_;
  prometheus::Family<prometheus::Counter>& ops_completed_;
  prometheus::Family<prometheus::Counter>& timeouts_;
  prometheus::Family<prometheus::Counter>& runs_;
  prometheus::Family<prometheus::Counter>& fault_packets_;
  prometheus::Family<prometheus::Counter>& fault_held_;
  prometheus::Family<prometheus::Gauge>& repetition_;
  prometheus::Family<prometheus::Gauge>& elapsed_;
  prometheus::Family<prometheus::Histogram>& collective_seconds_;
  prometheus::Family<prometheus::Summary>& jct_;
  prometheus::Family<prometheus::Summary>& collective_quantiles_;

  std::mutex mutex_;
  std::map<Key, HostTotals> seen_in_run_;  // each host's totals so far in its variant's current run
};

}  // namespace collide::orchestrator::metrics
