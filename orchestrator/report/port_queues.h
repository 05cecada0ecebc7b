#pragma once

#include <map>
#include <string>
#include <vector>

#include "collide/results.pb.h"
#include "orchestrator/report/port_stats.h"

// The switch ports' queues in a report: per port over a variant's repetitions, per tier, as
// report.json fields, a text table and an HTML table with a utilization heat map.
namespace collide::orchestrator::report {

struct Report;

// A variant's ports over its runs, fed one run's ports at a time and matched by link and end:
// counters summed, depth p95 the worst run's, depth max the largest, utilization the mean of each
// bin.
class PortMerge {
 public:
  void add(const std::vector<PortStats>& run);
  std::vector<PortStats> result() const;

 private:
  std::vector<PortStats> merged_;  // counters summed, utilization bins summed
  std::vector<size_t> runs_;       // runs that had each port, for the utilization mean
  std::map<std::pair<std::string, std::string>, size_t> index_;  // (link, end) -> its place
};

// Each tier's ports together (link and end empty): counters summed, depths the worst port's.
std::vector<PortStats> tier_totals(const std::vector<PortStats>& ports);

// CE marks per packet sent, and drops per million packets offered (sent + dropped).
double ecn_mark_ratio(const PortStats& p);
double drops_ppm(const PortStats& p);

// How tables name a port: its link and the switch whose queue it is ("leaf0-spine1 @spine1").
std::string port_label(const PortStats& p);

void to_proto(const PortStats& p, v1::PortQueueStats& out);

std::string port_queues_text(const Report& report);
std::string port_queues_html(const Report& report, std::string (*escape)(const std::string&));

}  // namespace collide::orchestrator::report
