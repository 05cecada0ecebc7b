#include "orchestrator/report/report.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "orchestrator/faults/occurrence_name.h"
#include "orchestrator/report/port_queues.h"
#include "orchestrator/report/collective_tally.h"
#include "replayer/collectives/accounting.h"
#include "traces/op_types.h"

namespace collide::orchestrator::report {
namespace {

namespace coll = replayer::collectives;

RepetitionSummary summarize_repetition(const RunResult& run) {
  RepetitionSummary r;
  r.repetition = run.repetition;
  r.failed = run.failed;
  r.failure = run.failure;
  r.jct_seconds = static_cast<double>(job_completion_ns(run)) / 1e9;
  for (uint64_t ns : iteration_completion_ns(run)) r.iteration_seconds.push_back(static_cast<double>(ns) / 1e9);
  r.faults = held_fault_windows(run);
  r.fabric_links = run.fabric_links;
  r.fabric = fabric_totals(run.fabric_links);
  r.ecmp = ecmp_balance(run.fabric_links);
  r.nics = run.nics;
  r.ports = run.ports;
  return r;
}

void to_proto(const FabricTotals& t, v1::FabricTraffic& out) {
  for (const auto* list : {&t.leaves, &t.spines, &t.super_spines}) {
    for (const SwitchTraffic& s : *list) {
      v1::SwitchTraffic& o = list == &t.leaves ? *out.add_leaves()
                             : list == &t.spines ? *out.add_spines()
                                                 : *out.add_super_spines();
      o.set_name(s.name);
      o.set_rail(s.rail);
      o.set_bytes_from_below(s.bytes_from_below);
      o.set_bytes_to_below(s.bytes_to_below);
      o.set_bytes_from_above(s.bytes_from_above);
      o.set_bytes_to_above(s.bytes_to_above);
      o.set_host_ring_drops(s.host_ring_drops);
    }
  }
  out.set_spine_bytes(t.spine_bytes());
  if (!t.super_spines.empty()) out.set_super_spine_bytes(t.super_spine_bytes());
}

void to_proto(const EcmpBalance& b, v1::EcmpBalance& out) {
  const auto tier = [](const LinkBalance& l, v1::LinkBalance& o) {
    o.set_links(l.links);
    o.set_ecmp_max_mean(l.max_mean);
    o.set_jain(l.jain);
    o.set_max_bytes(l.max_bytes);
    o.set_mean_bytes(l.mean_bytes);
  };
  tier(b.leaf_uplinks, *out.mutable_leaf_uplinks());
  tier(b.spine_downlinks, *out.mutable_spine_downlinks());
  if (b.spine_uplinks.links > 0) tier(b.spine_uplinks, *out.mutable_spine_uplinks());
  if (b.super_downlinks.links > 0) tier(b.super_downlinks, *out.mutable_super_downlinks());
}

void to_proto(const LinkEndCounters& c, v1::LinkEndCounters& out) {
  out.set_tx_bytes(c.tx_bytes);
  out.set_tx_packets(c.tx_packets);
  out.set_rx_bytes(c.rx_bytes);
  out.set_rx_packets(c.rx_packets);
  out.set_tx_dropped(c.tx_dropped);
  out.set_rx_dropped(c.rx_dropped);
}

void to_proto(const CollectiveSamples& c, v1::CollectiveTimeSamples& out) {
  out.set_kind(std::string(traces::op_kind_name(c.kind)));
  out.set_size_bytes(c.bytes);
  if (c.datatype != v1::DATA_TYPE_UNSPECIFIED) out.set_type(std::string(traces::datatype_name(c.datatype)));
  if (c.reduce_op != v1::REDUCE_OP_UNSPECIFIED) out.set_redop(std::string(traces::reduce_op_name(c.reduce_op)));
  out.set_count(c.count);
  for (double t : c.times_us) out.add_times_us(t);
  out.set_sampled(c.sampled);
  out.set_cap(static_cast<uint32_t>(c.cap));
}

std::string name_or_dash(std::string_view name) { return name.empty() ? "-" : std::string(name); }

}  // namespace

ReportBuilder::ReportBuilder(std::string scenario, ReportLimits limits)
    : scenario_(std::move(scenario)), limits_(limits) {}

ReportBuilder::~ReportBuilder() = default;

void ReportBuilder::add(const RunResult& run) {
  auto found = variants_.find(run.variant);
  if (found == variants_.end()) {
    order_.push_back(run.variant);
    found = variants_.try_emplace(run.variant, limits_.collective_times).first;
  }
  VariantState& state = found->second;
  VariantSummary& v = state.summary;
  v.name = run.variant;
  ++v.runs;
  v.packets_sent += run.packets_sent;
  v.retransmitted_packets += run.retransmitted_packets;
  v.timeouts += run.timeouts;
  if (!v.roofline.known()) v.roofline = run.roofline;
  for (const v1::NicTraffic& n : run.nics) {
    v.packets_received += n.packets_received();
    v.out_of_order_packets += n.out_of_order_packets();
    v.nic_pause_frames += n.pause_frames();
    v.nic_paused_ns += n.paused_ns();
    v.nic_pause_frames_sent += n.pause_frames_sent();
    v.nic_rx_buffer_dropped += n.rx_buffer_dropped();
  }
  RepetitionSummary rep = summarize_repetition(run);
  add_fabric_totals(v.fabric, rep.fabric);
  state.ecmp.add(rep.ecmp);
  state.ports.add(rep.ports);
  // A recurring fault's occurrences ("flap#2") add up under the fault's own name.
  for (const FaultWindow& f : run.faults) {
    const std::string fault = faults::fault_of_occurrence(f.name);
    auto it = std::find_if(v.faults.begin(), v.faults.end(),
                           [&](const FaultWindow& g) { return g.name == fault; });
    if (it == v.faults.end()) {
      v.faults.push_back(f);
      v.faults.back().name = fault;
    } else {
      it->packets_matched += f.packets_matched;
      it->packets_acted += f.packets_acted;
    }
  }
  std::vector<CollectiveTime> times = collective_times(run);
  // An interrupted run has no JCT, but the collectives all their ranks finished before the stop
  // are measured like any other; one some ranks never finished is not. (A run that failed of
  // itself counts for nothing: its last collectives ran against the failure.)
  const bool measured = !run.failed || run.interrupted;
  if (run.failed) {
    ++v.failed_runs;
    if (v.failures.size() < limits_.failures) {
      v.failures.push_back(fmt::format("repetition {}: {}", run.repetition, run.failure));
    }
    if (run.interrupted) {
      std::erase_if(times, [](const CollectiveTime& c) { return c.failed || c.ranks_seen < c.comm_size; });
    }
  } else {
    v.jct_seconds.push_back(rep.jct_seconds);
  }
  if (measured) {
    for (const CollectiveTime& c : times) state.collectives.add(c);
  }
  // Past the detailed repetitions a run lives on in the variant's totals, JCTs and tallies above
  // (and in runs.jsonl), not as a repetition of its own.
  if (v.repetitions.size() >= limits_.detailed_repetitions) return;
  if (measured) rep.collective_samples = sample_collective_times(times, run.repetition);
  v.repetitions.push_back(std::move(rep));
}

Report ReportBuilder::finish(const std::vector<JobRanks>& jobs, const std::vector<RunResult>& runs) && {
  Report report;
  report.scenario = scenario_;
  // The baseline leads, so others compare against it.
  std::stable_partition(order_.begin(), order_.end(), [](const std::string& n) { return n == "baseline"; });
  double baseline_jct = 0;
  if (auto b = variants_.find("baseline"); b != variants_.end()) {
    baseline_jct = mean_with_interval(b->second.summary.jct_seconds).mean;
  }
  for (const std::string& name : order_) {
    VariantState& state = variants_.at(name);
    VariantSummary& v = state.summary;
    v.jct = positive_mean_with_interval(v.jct_seconds);
    if (baseline_jct > 0) {
      std::vector<double> ratios;
      for (double j : v.jct_seconds) ratios.push_back(j / baseline_jct);
      v.slowdown = positive_mean_with_interval(ratios);
    }
    if (v.failed_runs > v.failures.size()) {
      v.failures.push_back(fmt::format("... and {} more failed runs (runs.jsonl has each)", v.failed_runs - v.failures.size()));
    }
    state.collectives.summarize(v);
    if (v.roofline.known() && v.jct.mean > 0) v.jct_roofline_ratio = v.jct.mean / v.roofline.seconds;
    v.ecmp = state.ecmp.mean();
    v.ports = state.ports.result();
    report.variants.push_back(std::move(v));
  }
  if (!jobs.empty()) add_job_results(report, jobs, runs);
  return report;
}

Report build_report(const std::string& scenario, const std::vector<RunResult>& runs,
                    const std::vector<JobRanks>& jobs) {
  ReportBuilder builder(scenario);
  for (const RunResult& run : runs) builder.add(run);
  return std::move(builder).finish(jobs, runs);
}

v1::Results to_results(const Report& report) {
  v1::Results out;
  out.set_scenario(report.scenario);
  out.set_description(report.description);
  for (const v1::SweepSetting& s : report.sweep_point) *out.add_sweep_point() = s;
  for (const v1::JobInterference& i : report.interference) *out.add_interference() = i;
  for (const SoakHourRow& h : report.hours) {
    v1::SoakHour& o = *out.add_hours();
    o.set_hour(h.hour);
    o.set_variant(h.variant);
    o.set_runs(h.runs);
    o.set_failed_runs(h.failed_runs);
    o.set_jct_p50_seconds(h.jct_p50_s);
    o.set_jct_p99_seconds(h.jct_p99_s);
    o.set_jct_max_seconds(h.jct_max_s);
    o.set_slowdown(h.slowdown.value_or(0));
    o.set_worst_p99_us(h.worst_p99_us);
    o.set_retransmitted_packets(h.retransmitted_packets);
    o.set_timeouts(h.timeouts);
  }
  for (const VariantSummary& v : report.variants) {
    v1::VariantResults& r = *out.add_variants();
    r.set_name(v.name);
    r.set_runs(v.runs);
    r.set_failed_runs(v.failed_runs);
    for (const std::string& f : v.failures) r.add_failures(f);
    for (double j : v.jct_seconds) r.add_jct_seconds(j);
    r.set_jct_mean_seconds(v.jct.mean);
    r.add_jct_ci95_seconds(v.jct.low);
    r.add_jct_ci95_seconds(v.jct.high);
    r.set_jct_geomean_seconds(v.jct.geomean);
    for (const v1::JobResults& j : v.jobs) *r.add_jobs() = j;
    if (v.slowdown.n > 0) {
      r.set_slowdown_mean(v.slowdown.mean);
      r.set_slowdown_geomean(v.slowdown.geomean);
      r.add_slowdown_ci95(v.slowdown.low);
      r.add_slowdown_ci95(v.slowdown.high);
    }
    v1::CollectiveTimeSummary& t = *r.mutable_collective_time_us();
    t.set_p50(v.p50_us);
    t.set_p99(v.p99_us);
    t.set_p999(v.p999_us);
    t.set_max(v.max_us);
    t.set_count(v.collective_count);
    for (const SizeRow& s : v.sizes) {
      v1::SizeRow& row = *r.add_sizes();
      row.set_kind(std::string(traces::op_kind_name(s.kind)));
      row.set_size_bytes(s.bytes);
      const uint32_t element = traces::datatype_size(s.datatype);
      row.set_elements(element > 0 ? s.bytes / element : 0);
      if (s.datatype != v1::DATA_TYPE_UNSPECIFIED) row.set_type(std::string(traces::datatype_name(s.datatype)));
      if (s.reduce_op != v1::REDUCE_OP_UNSPECIFIED) row.set_redop(std::string(traces::reduce_op_name(s.reduce_op)));
      row.set_count(s.count);
      row.set_time_p50_us(s.p50_us);
      row.set_time_p99_us(s.p99_us);
      row.set_time_max_us(s.max_us);
      row.set_algbw_gbps(s.algbw_gbytes);
      row.set_busbw_gbps(s.busbw_gbytes);
    }
    r.set_packets_sent(v.packets_sent);
    r.set_retransmitted_packets(v.retransmitted_packets);
    r.set_timeouts(v.timeouts);
    r.set_packets_received(v.packets_received);
    r.set_out_of_order_packets(v.out_of_order_packets);
    r.set_out_of_order_rate(v.out_of_order_rate());
    for (const FaultWindow& f : v.faults) {
      v1::FaultTruth& ft = *r.add_faults();
      ft.set_name(f.name);
      ft.set_kind(f.kind);
      ft.set_packets_matched(f.packets_matched);
      ft.set_packets_acted(f.packets_acted);
    }
    for (const RepetitionSummary& rep : v.repetitions) {
      v1::RepetitionResult& rr = *r.add_repetitions();
      rr.set_repetition(rep.repetition);
      rr.set_failed(rep.failed);
      rr.set_failure(rep.failure);
      rr.set_jct_seconds(rep.jct_seconds);
      for (double s : rep.iteration_seconds) rr.add_iteration_seconds(s);
      for (const FaultWindow& f : rep.faults) {
        v1::FaultWindowResult& w = *rr.add_fault_windows();
        w.set_name(f.name);
        w.set_kind(f.kind);
        w.set_start_ns(f.start_ns);
        w.set_end_ns(f.end_ns);
        w.set_packets_matched(f.packets_matched);
        w.set_packets_acted(f.packets_acted);
      }
      for (const FabricLink& l : rep.fabric_links) {
        v1::FabricLinkTraffic& o = *rr.add_fabric_links();
        o.set_name(l.name);
        to_proto(l.lower_end, *o.mutable_lower());
        to_proto(l.upper_end, *o.mutable_upper());
      }
      if (!rep.fabric.empty()) to_proto(rep.fabric, *rr.mutable_fabric());
      for (const CollectiveSamples& c : rep.collective_samples) to_proto(c, *rr.add_collective_times());
      if (!rep.ecmp.empty()) to_proto(rep.ecmp, *rr.mutable_ecmp());
      for (const v1::NicTraffic& n : rep.nics) *rr.add_nics() = n;
      for (const PortStats& p : rep.ports) to_proto(p, *rr.add_ports());
    }
    if (!v.fabric.empty()) to_proto(v.fabric, *r.mutable_fabric());
    if (!v.ecmp.empty()) to_proto(v.ecmp, *r.mutable_ecmp());
    if (v.roofline.known()) {
      v1::Roofline& o = *r.mutable_roofline();
      o.set_seconds(v.roofline.seconds);
      o.set_bottleneck(v.roofline.bottleneck);
      o.set_bottleneck_bytes(v.roofline.bottleneck_bytes);
      o.set_bottleneck_gbps(v.roofline.bottleneck_gbps);
      o.set_jct_ratio(v.jct_roofline_ratio);
    }
    for (const PortStats& p : v.ports) to_proto(p, *r.add_ports());
    for (const PortStats& p : tier_totals(v.ports)) to_proto(p, *r.add_port_tiers());
  }
  return out;
}

std::string results_json(const Report& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;  // a zero is an answer too (no retransmissions)
  options.preserve_proto_field_names = true;
  std::string json;
  // Printing a message we just built cannot fail; an empty object would still be valid JSON.
  if (!google::protobuf::util::MessageToJsonString(to_results(report), &json, options).ok()) return "{}";
  return json;
}

nlohmann::json report_json(const Report& report) { return nlohmann::json::parse(results_json(report)); }

std::string size_table(const VariantSummary& v) {
  std::string out = fmt::format("# {}: {} runs, {} failed\n", v.name, v.runs, v.failed_runs);
  out += fmt::format("# {:>12} {:>12} {:>9} {:>6} {:>15} {:>7} | {:>10} {:>10} {:>10} {:>7} {:>7}\n",
                     "size(B)", "count(elem)", "type", "redop", "collective", "ops", "p50(us)",
                     "p99(us)", "max(us)", "algbw", "busbw");
  for (const SizeRow& r : v.sizes) {
    const uint32_t element = traces::datatype_size(r.datatype);
    out += fmt::format(
        "  {:>12} {:>12} {:>9} {:>6} {:>15} {:>7} | {:>10.1f} {:>10.1f} {:>10.1f} {:>7.2f} {:>7.2f}\n",
        r.bytes, element > 0 ? std::to_string(r.bytes / element) : "-",
        name_or_dash(r.datatype == v1::DATA_TYPE_UNSPECIFIED ? "" : traces::datatype_name(r.datatype)),
        name_or_dash(r.reduce_op == v1::REDUCE_OP_UNSPECIFIED ? "" : traces::reduce_op_name(r.reduce_op)),
        traces::op_kind_name(r.kind), r.count, r.p50_us, r.p99_us, r.max_us, r.algbw_gbytes,
        r.busbw_gbytes);
  }
  return out;
}

std::string production_table(const VariantSummary& v) {
  if (v.production.empty()) return {};
  std::string out = fmt::format("# {}: production (as the trace measured it) vs replay\n", v.name);
  out += fmt::format("# {:>15} {:>7} | {:>12} {:>12} | {:>12} {:>12} | {:>8}\n", "collective",
                     "ops", "prod p50(us)", "prod p99(us)", "repl p50(us)", "repl p99(us)",
                     "p50 x");
  for (const ProductionRow& r : v.production) {
    out += fmt::format("  {:>15} {:>7} | {:>12.1f} {:>12.1f} | {:>12.1f} {:>12.1f} | {:>8}\n",
                       traces::op_kind_name(r.kind), r.count, r.production_p50_us,
                       r.production_p99_us, r.replay_p50_us, r.replay_p99_us,
                       r.production_p50_us > 0
                           ? fmt::format("{:.2f}", r.replay_p50_us / r.production_p50_us)
                           : std::string("-"));
  }
  return out;
}

}  // namespace collide::orchestrator::report
