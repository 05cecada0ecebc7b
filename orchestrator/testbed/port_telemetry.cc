#include "orchestrator/testbed/port_telemetry.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "orchestrator/report/statistics.h"
#include "orchestrator/testbed/link_counters.h"

namespace collide::orchestrator::testbed {
namespace {

// A counter tc prints as a JSON number; absent (a qdisc without it) is zero, anything else an error.
Result<uint64_t> counter(const nlohmann::json& q, const char* field) {
  auto it = q.find(field);
  if (it == q.end()) return uint64_t{0};
  if (!it->is_number_unsigned()) {
    return invalid_argument(fmt::format("tc qdisc JSON: '{}' is not a counter: {}", field, it->dump()));
  }
  return it->get<uint64_t>();
}

}  // namespace

Result<std::vector<QdiscStats>> parse_qdisc_json(const std::string& json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_array()) {
    return invalid_argument("tc qdisc JSON: not a JSON array: " + json.substr(0, 80));
  }
  std::vector<QdiscStats> out;
  for (const nlohmann::json& q : doc) {
    if (!q.is_object() || !q.contains("kind") || !q["kind"].is_string()) {
      return invalid_argument("tc qdisc JSON: a qdisc without a kind: " + q.dump());
    }
    QdiscStats s;
    s.kind = q["kind"].get<std::string>();
    if (auto dev = q.find("dev"); dev != q.end() && dev->is_string()) s.dev = dev->get<std::string>();
    if (auto root = q.find("root"); root != q.end() && root->is_boolean()) s.root = root->get<bool>();
    for (auto [field, into] : {std::pair{"bytes", &s.bytes}, std::pair{"packets", &s.packets},
                               std::pair{"drops", &s.drops}, std::pair{"backlog", &s.backlog},
                               std::pair{"marked", &s.marked}}) {
      auto v = counter(q, field);
      if (!v.ok()) return v.status();
      *into = *v;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, PortSample> port_samples(const std::vector<QdiscStats>& qdiscs, int64_t t_ns) {
  std::map<std::string, PortSample> out;
  for (const QdiscStats& q : qdiscs) {
    if (q.dev.empty()) continue;
    PortSample& p = out[q.dev];
    p.t_ns = t_ns;
    p.marks += q.marked;
    if (!q.root) continue;
    p.bytes = q.bytes;
    p.packets = q.packets;
    p.drops = q.drops;
    p.backlog = q.backlog;
  }
  return out;
}

report::PortStats summarize_port(const std::vector<PortSample>& samples, double gbps, size_t bins) {
  report::PortStats s;
  s.gbps = gbps;
  s.samples = samples.size();
  if (samples.empty()) return s;
  const PortSample& first = samples.front();
  const PortSample& last = samples.back();
  // Counters only grow; a qdisc replaced during the run would restart them, which counts as zero.
  auto grown = [](uint64_t a, uint64_t b) { return b >= a ? b - a : 0; };
  s.bytes = grown(first.bytes, last.bytes);
  s.packets = grown(first.packets, last.packets);
  s.drops = grown(first.drops, last.drops);
  s.ecn_marks = grown(first.marks, last.marks);
  std::vector<double> depth;
  depth.reserve(samples.size());
  for (const PortSample& p : samples) {
    depth.push_back(static_cast<double>(p.backlog));
    s.depth_max_bytes = std::max(s.depth_max_bytes, p.backlog);
  }
  s.depth_p95_bytes = static_cast<uint64_t>(report::quantile(depth, 0.95));
  const int64_t span = last.t_ns - first.t_ns;
  if (bins == 0 || span <= 0) return s;
  s.bin_seconds = static_cast<double>(span) / 1e9 / static_cast<double>(bins);
  std::vector<double> bytes(bins, 0.0);
  // Each interval's bytes are spread over the bins it overlaps, in proportion to the time it
  // spends in each (the rate within an interval is all the counters tell). Polls slower than a
  // bin's width (several namespaces' qdiscs read one after the other on a busy machine) would
  // otherwise leave every other bin empty and double the next.
  const double bin_ns = static_cast<double>(span) / static_cast<double>(bins);
  for (size_t i = 1; i < samples.size(); ++i) {
    const double from = static_cast<double>(samples[i - 1].t_ns - first.t_ns);
    const double to = static_cast<double>(samples[i].t_ns - first.t_ns);
    const double moved = static_cast<double>(grown(samples[i - 1].bytes, samples[i].bytes));
    if (moved == 0) continue;
    if (to <= from) {  // two samples at one instant: the bin that instant falls in
      bytes[std::min(bins - 1, static_cast<size_t>(from / bin_ns))] += moved;
      continue;
    }
    const size_t first_bin = std::min(bins - 1, static_cast<size_t>(from / bin_ns));
    for (size_t b = first_bin; b < bins && static_cast<double>(b) * bin_ns < to; ++b) {
      const double overlap = std::min(to, static_cast<double>(b + 1) * bin_ns) -
                             std::max(from, static_cast<double>(b) * bin_ns);
      if (overlap > 0) bytes[b] += moved * overlap / (to - from);
    }
  }
  const double bin_capacity = gbps * 1e9 / 8 * s.bin_seconds;
  for (double b : bytes) s.utilization.push_back(gbps > 0 ? b / bin_capacity : b);
  return s;
}

Result<std::unique_ptr<PortTelemetry>> PortTelemetry::start(const TestbedPlan& plan,
                                                            std::chrono::milliseconds period,
                                                            ExtraCountsReader extra) {
  std::unique_ptr<PortTelemetry> t(new PortTelemetry());
  t->extra_ = std::move(extra);
  std::set<std::string> switches;
  for (const PlannedNamespace& ns : plan.namespaces) {
    if (ns.role != Role::kHost) switches.insert(ns.name);
  }
  for (const PlannedLink& l : plan.links) {
    const report::FabricLink named = name_link(plan, l);
    // The switch ends: the leaf of a host link, both ends of a leaf-spine link.
    for (const auto& [end, end_name] : {std::pair{&l.a, named.lower}, std::pair{&l.b, named.upper}}) {
      if (switches.count(end->netns) == 0) continue;
      Port p;
      p.netns = end->netns;
      p.ifname = end->ifname;
      p.about.link = named.name;
      p.about.end = end_name;
      p.about.tier = end->queue.tier;
      p.about.gbps = end->queue.gbps;
      t->ports_.push_back(std::move(p));
    }
  }
  t->namespaces_.assign(switches.begin(), switches.end());
  t->t0_ = std::chrono::steady_clock::now();
  COLLIDE_RETURN_IF_ERROR(t->sample());
  t->thread_ = std::thread([raw = t.get(), period] { raw->run(period); });
  return t;
}

PortTelemetry::~PortTelemetry() { stop_thread(); }

void PortTelemetry::stop_thread() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PortTelemetry::run(std::chrono::milliseconds period) {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, period, [&] { return stop_; })) {
    lock.unlock();
    const Status s = sample();
    lock.lock();
    if (!s.ok() && first_error_.empty()) first_error_ = s.message();
  }
}

Status PortTelemetry::sample() {
  const int64_t t_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - t0_).count();
  std::map<std::string, std::map<std::string, PortSample>> by_netns;
  for (const std::string& ns : namespaces_) {
    auto out = process::run_command({"tc", "-n", ns, "-s", "-j", "qdisc", "show"});
    if (!out.ok()) return out.status().with_context("sampling the queues of " + ns);
    if (out->exit_code != 0) {
      return unavailable(fmt::format("sampling the queues of {}: tc exited {}: {}", ns, out->exit_code,
                                     out->output));
    }
    auto qdiscs = parse_qdisc_json(out->output);
    if (!qdiscs.ok()) return qdiscs.status().with_context(ns);
    by_netns[ns] = port_samples(*qdiscs, t_ns);
  }
  const bool keep = taken_++ % stride_ == 0;
  if (!keep) return {};
  const std::map<std::string, ExtraPortCounts> extra = extra_ ? extra_() : std::map<std::string, ExtraPortCounts>{};
  for (Port& p : ports_) {
    PortSample s = by_netns[p.netns][p.ifname];
    s.t_ns = t_ns;
    if (auto e = extra.find(p.netns + "/" + p.ifname); e != extra.end()) {
      s.marks += e->second.marks;
      s.drops += e->second.drops;
    }
    p.samples.push_back(s);
  }
  // Bounded memory: thin every port to every other sample and keep half as many from now on.
  if (!ports_.empty() && ports_.front().samples.size() >= kMaxPortSamples) {
    for (Port& p : ports_) {
      std::vector<PortSample> kept;
      for (size_t i = 0; i < p.samples.size(); i += 2) kept.push_back(p.samples[i]);
      p.samples = std::move(kept);
    }
    stride_ *= 2;
  }
  return {};
}

Result<std::vector<report::PortStats>> PortTelemetry::finish() {
  stop_thread();
  // The last sample always counts, whatever the stride: the counters end here.
  stride_ = 1;
  COLLIDE_RETURN_IF_ERROR(sample());
  if (!first_error_.empty()) return unavailable("port telemetry: " + first_error_);
  std::vector<report::PortStats> out;
  for (const Port& p : ports_) {
    report::PortStats s = summarize_port(p.samples, p.about.gbps, kUtilizationBins);
    s.link = p.about.link;
    s.end = p.about.end;
    s.tier = p.about.tier;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace collide::orchestrator::testbed
