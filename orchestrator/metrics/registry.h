#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

// Live counters of a run, as a Prometheus text endpoint serves them during long soak runs.
// Writers (the runner, as agents report) set values; the endpoint renders a snapshot.
namespace collide::orchestrator::metrics {

using Labels = std::map<std::string, std::string>;

class Registry {
 public:
  // Declares a metric family once: name (e.g. "collide_packets_sent_total"), help text, and
  // "counter" or "gauge". Setting an undeclared name declares it as a gauge with no help.
  void describe(const std::string& name, const std::string& help, const std::string& type);
  void set(const std::string& name, const Labels& labels, double value);
  void add(const std::string& name, const Labels& labels, double delta);
  // The Prometheus text exposition format (version 0.0.4) of every value set so far.
  std::string render() const;

 private:
  struct Family {
    std::string help;
    std::string type = "gauge";
    std::map<Labels, double> values;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Family> families_;
};

}  // namespace collide::orchestrator::metrics
