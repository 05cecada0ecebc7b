#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "orchestrator/report/port_stats.h"
#include "orchestrator/testbed/testbed_plan.h"

// The switch ports' queues, sampled through a run: one `tc -s -j qdisc show` per switch namespace
// every period, on a thread of its own, into counters (bytes, packets, drops, ECN marks) and a
// queue depth per sample. Bounded: past kMaxSamples a port's samples are thinned to every other
// one and the sampler keeps every other sample from then on.
namespace collide::orchestrator::testbed {

inline constexpr std::chrono::milliseconds kPortSamplePeriod{20};
inline constexpr size_t kMaxPortSamples = 4096;
inline constexpr size_t kUtilizationBins = 32;

// One qdisc as `tc -s -j qdisc show` prints it.
struct QdiscStats {
  std::string dev;
  std::string kind;
  bool root = false;
  uint64_t bytes = 0;
  uint64_t packets = 0;
  uint64_t drops = 0;
  uint64_t backlog = 0;  // bytes queued
  uint64_t marked = 0;   // RED: frames marked CE
};

Result<std::vector<QdiscStats>> parse_qdisc_json(const std::string& json);

// One port at one instant: its root qdisc's counters and backlog (a root counts what its children
// drop and hold), the ECN marks of whichever of its qdiscs marks.
struct PortSample {
  int64_t t_ns = 0;  // since sampling started
  uint64_t bytes = 0;
  uint64_t packets = 0;
  uint64_t drops = 0;
  uint64_t marks = 0;
  uint64_t backlog = 0;
};

std::map<std::string, PortSample> port_samples(const std::vector<QdiscStats>& qdiscs, int64_t t_ns);

// What a port's samples say: counters as the difference of the last and first, depth quantiles
// over all, utilization in `bins` equal bins between the first and last sample.
report::PortStats summarize_port(const std::vector<PortSample>& samples, double gbps, size_t bins);

// What a port's qdiscs cannot count because it happens before them (the ECN marker on the port's
// egress marks and drops there), by "<netns>/<ifname>", as running totals.
struct ExtraPortCounts {
  uint64_t marks = 0;
  uint64_t drops = 0;
};
using ExtraCountsReader = std::function<std::map<std::string, ExtraPortCounts>()>;

class PortTelemetry {
 public:
  // Takes the first sample now (so a run's counters start here) and starts the thread. `extra`,
  // when given, is read with every sample and added to the ports' marks and drops.
  static Result<std::unique_ptr<PortTelemetry>> start(const TestbedPlan& plan,
                                                      std::chrono::milliseconds period = kPortSamplePeriod,
                                                      ExtraCountsReader extra = {});
  ~PortTelemetry();
  PortTelemetry(const PortTelemetry&) = delete;
  PortTelemetry& operator=(const PortTelemetry&) = delete;

  // Stops the thread, takes the last sample and summarizes every switch port.
  Result<std::vector<report::PortStats>> finish();

 private:
  struct Port {
    std::string netns;
    std::string ifname;
    report::PortStats about;  // link, end, tier, gbps
    std::vector<PortSample> samples;
  };
  PortTelemetry() = default;
  Status sample();
  void run(std::chrono::milliseconds period);
  void stop_thread();

  std::vector<Port> ports_;
  std::vector<std::string> namespaces_;
  ExtraCountsReader extra_;
  std::chrono::steady_clock::time_point t0_;
  size_t stride_ = 1;  // keep every stride_-th sample
  size_t taken_ = 0;
  std::string first_error_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace collide::orchestrator::testbed
