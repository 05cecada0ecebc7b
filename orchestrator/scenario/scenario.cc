#include "orchestrator/scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/input_limits.h"
#include "common/yaml_proto.h"
#include "orchestrator/replay/transport_options.h"
#include "orchestrator/scenario/expectations_check.h"
#include "orchestrator/scenario/incast_workload.h"
#include "orchestrator/scenario/jobs.h"
#include "orchestrator/scenario/scenario_bounds.h"
#include "orchestrator/scenario/switch_queues.h"
#include "orchestrator/scenario/synth_workload.h"
#include "orchestrator/testbed/link_counters.h"
#include "orchestrator/testbed/link_names.h"
#include "orchestrator/testbed/pfc_settings.h"
#include "orchestrator/testbed/testbed_plan.h"
#include "orchestrator/testbed/switch_routes.h"
#include "orchestrator/faults/occurrence_name.h"
#include "orchestrator/faults/phase_name.h"
#include "orchestrator/faults/storm_options.h"
#include "traces/analysis/trace_validator.h"
#include "traces/synth/model_spec.h"
#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

class Checker {
 public:
  Checker(std::string source, const config::FieldLines* lines)
      : source_(std::move(source)), lines_(lines) {}

  // The same checker for a part checked as if it were the whole: a job's workload is checked by
  // the scenario's workload checks, and their "workload..." fields are the job's ("jobs[1].workload...").
  Checker nested(std::string from, std::string to) const {
    Checker c = *this;
    c.from_ = std::move(from);
    c.to_ = std::move(to);
    return c;
  }

  Status error(const std::string& written_field, const std::string& what) const {
    const std::string field = !from_.empty() && written_field.rfind(from_, 0) == 0
                                  ? to_ + written_field.substr(from_.size())
                                  : written_field;
    int line = 0;
    if (lines_ != nullptr) {
      // The field itself, or the nearest enclosing one that was written down.
      for (std::string f = field; !f.empty(); f = f.substr(0, f.find_last_of(".["))) {
        if (auto it = lines_->find(f); it != lines_->end()) {
          line = it->second;
          break;
        }
        if (f.find_last_of(".[") == std::string::npos) break;
      }
    }
    return invalid_argument(fmt::format("{}:{}: {}: {}", source_, line > 0 ? std::to_string(line) : "?",
                                        field, what));
  }

 private:
  std::string source_;
  const config::FieldLines* lines_;
  std::string from_, to_;  // a field prefix and what it stands for; empty: fields as they are
};

void apply_workload_defaults(v1::Workload& w) {
  // A bare preset name is the synthesizer with the preset's own parallelism.
  if (!w.synth_model().empty() && !w.has_synth()) w.mutable_synth()->set_model(w.synth_model());
  if (w.iterations() == 0) w.set_iterations(1);
  if (w.bytes_scale() == 0) w.set_bytes_scale(1);
}

void apply_defaults(v1::Scenario& s) {
  v1::Testbed& t = *s.mutable_testbed();
  if (t.ranks_per_host() == 0) t.set_ranks_per_host(2);
  if (t.port().empty()) t.set_port("af_xdp");
  if (t.agents_size() == 0) {
    v1::VirtualTestbedSpec& v = *t.mutable_virtual_();
    if (v.name().empty()) v.set_name("demo");
    if (v.hosts() == 0) v.set_hosts(2);
    if (v.nics_per_host() == 0) v.set_nics_per_host(1);
    if (v.leaves() == 0) v.set_leaves(v.spines() == 0 ? 1 : 2);
  }
  // A storm pauses the fabric's lossless class unless it names others.
  const uint32_t lossless_priority = testbed::resolve_pfc(t.virtual_()).priority;
  for (v1::Fault& f : *s.mutable_faults()) {
    if (f.kind() == v1::Fault::KIND_PFC_STORM && f.pfc_priorities_size() == 0) f.add_pfc_priorities(lossless_priority);
  }
  if (s.jobs_size() == 0) apply_workload_defaults(*s.mutable_workload());
  for (v1::Job& job : *s.mutable_jobs()) apply_workload_defaults(*job.mutable_workload());
  // A soak (runs.duration_ns) runs as many repetitions as its duration holds.
  if (s.runs().repetitions() == 0 && s.runs().duration_ns() == 0) s.mutable_runs()->set_repetitions(1);
  if (s.outputs().directory().empty()) {
    s.mutable_outputs()->set_directory("collide-results/" + s.name());
  }
}

// The synthesized job must fill the testbed exactly: one rank per slot, no slot left over.
Status check_synth(const v1::Workload& w, uint32_t world, const Checker& c) {
  const std::string field = w.has_synth() ? "workload.synth" : "workload.synth_model";
  const std::string model_field = w.has_synth() ? "workload.synth.model" : "workload.synth_model";
  // load_scenario resolved the model against the scenario's folder; a scenario made in memory
  // names it relative to the working directory.
  v1::Synth synth = w.synth();
  if (synth.model().empty()) synth.set_model(w.synth_model());
  auto model = resolve_model_spec(synth.model(), std::filesystem::current_path());
  if (!model.ok()) return c.error(model_field, model.status().message());
  synth.set_model(*model);
  auto spec = synth_model_spec(synth, w.iterations());
  if (!spec.ok()) return c.error(model_field, spec.status().message());
  const uint32_t ranks = traces::synth::world_size(*spec);
  if (ranks != world) {
    const v1::ParallelismSpec& p = spec->parallelism();
    return c.error(field, fmt::format("the job has tp {} x pp {} x dp {} = {} ranks but the testbed "
                                      "holds hosts x ranks_per_host = {}; set tp, pp, dp so that "
                                      "they multiply to {}",
                                      p.tp(), p.pp(), p.dp(), ranks, world, world));
  }
  return {};
}

// Runs the checks of `collide trace validate` on the whole trace: an op that could not have run
// (an undeclared communicator, a send without its receive, a damaged record) stops the scenario
// before anything is built, as do sizes past the limits.
Status check_trace(const v1::Scenario& s, const std::string& path, uint32_t world, const Checker& c) {
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > limits::kMaxRunTraceBytes) {
    return c.error("workload.trace", fmt::format("{} is {} bytes; a run holds it in memory and sends it to "
                                                 "every agent, so it may be at most {} (common/input_limits.h)",
                                                 path, size, limits::kMaxRunTraceBytes));
  }
  auto reader = traces::TraceReader::open(path);
  if (!reader.ok()) return c.error("workload.trace", reader.status().message());
  const uint32_t ranks = (*reader)->header().world_size();
  if (ranks != world) {
    return c.error("workload.trace", fmt::format("{} has {} ranks but the testbed holds hosts x "
                                                 "ranks_per_host = {}", path, ranks, world));
  }
  traces::analysis::ValidateOptions options;
  options.max_reported = 3;
  auto report = traces::analysis::validate_trace(path, options);
  if (!report.ok()) return c.error("workload.trace", report.status().message());
  if (!report->valid()) {
    std::string issues;
    for (const auto& issue : report->issues) issues += (issues.empty() ? "" : "; ") + issue.to_string();
    const uint64_t more = report->issues_total - report->issues.size();
    return c.error("workload.trace", fmt::format("{} could not have run: {}{} (`collide trace validate {}` "
                                                 "lists every problem)",
                                                 path, issues, more ? fmt::format("; and {} more", more) : "", path));
  }
  if (auto p = records_problem(s, report->ops_read, "workload.trace")) return c.error(p->field, p->what);
  return {};
}

Status check_workload_source(const v1::Scenario& s, uint32_t world, const Checker& c) {
  const v1::Workload& w = s.workload();
  if (w.has_synth() || !w.synth_model().empty()) return check_synth(w, world, c);
  if (w.has_incast()) {
    if (auto problem = incast_problem(w.incast(), world)) return c.error(problem->field, problem->what);
  }
  if (!w.trace().empty()) return check_trace(s, w.trace(), world, c);
  if (auto ops = generated_ops_per_run(w, world)) {
    if (auto p = records_problem(s, *ops, w.has_incast() ? "workload.incast" : "workload.collectives")) {
      return c.error(p->field, p->what);
    }
  }
  return {};
}

// A fault on a real host acts on the host's own NIC, where the replay's packet socket sees
// arriving frames before tc and sends past the qdiscs: only what can act there is accepted.
Status check_real_host_fault(const v1::Fault& f, const v1::Testbed& t, const std::string& at,
                             const Checker& c) {
  const bool per_packet = f.kind() == v1::Fault::KIND_LOSS || f.kind() == v1::Fault::KIND_BURST_LOSS ||
                          f.kind() == v1::Fault::KIND_BLACKHOLE || f.kind() == v1::Fault::KIND_CORRUPT ||
                          f.kind() == v1::Fault::KIND_ECN_MARK;
  if (per_packet && f.direction() != v1::Fault::DIRECTION_TO_HOST) {
    return c.error(at + ".direction", "on a real host only frames arriving at its NIC can be faulted: "
                                      "use to-host (on the peer's link for the other direction)");
  }
  if (per_packet && t.port() != "af_packet") {
    return c.error("testbed.port", fmt::format("fault '{}' acts by XDP on a real host's NIC, which DPDK's "
                                               "AF_XDP driver holds: use port: af_packet",
                                               f.name()));
  }
  if (f.kind() == v1::Fault::KIND_RATE_LIMIT) {
    return c.error(at + ".kind", "a real host's replay sends past its qdiscs: it cannot be rate-limited there");
  }
  return {};
}

// A topology-aware ring order puts the hosts of one leaf together: on real hosts only the
// scenario can say which leaf each host is cabled to (a virtual testbed knows its own).
Status check_ring_order_leaves(const v1::Scenario& s, const Checker& c) {
  const auto topology = [](const v1::TransportSettings& t) {
    return t.ring_order() == v1::TransportSettings::RING_ORDER_TOPOLOGY;
  };
  std::string field = topology(s.transport()) ? "transport.ring_order" : "";
  for (int i = 0; i < s.runs().variants_size() && field.empty(); ++i) {
    if (topology(s.runs().variants(i).transport())) {
      field = fmt::format("runs.variants[{}].transport.ring_order", i);
    }
  }
  if (field.empty()) return {};
  for (int i = 0; i < s.testbed().agents_size(); ++i) {
    if (!s.testbed().agents(i).has_leaf()) {
      return c.error(field, fmt::format("topology needs the leaf of every host: give "
                                        "testbed.agents[{}] a leaf", i));
    }
  }
  return {};
}

// The workload's own checks: one source, sane sizes, and a job that fills `world` ranks.
Status check_workload(const v1::Scenario& s, uint32_t world, const Checker& c) {
  const v1::Workload& w = s.workload();
  if (auto p = workload_bounds_problem(w)) return c.error(p->field, p->what);
  const int sources = !w.trace().empty() + (w.has_synth() || !w.synth_model().empty()) + w.has_collectives() +
                      w.has_incast();
  if (sources != 1) {
    return c.error("workload", "give exactly one of trace, synth (or synth_model) or collectives (or incast)");
  }
  if (w.has_collectives() && (w.collectives().kind() == v1::OP_KIND_UNSPECIFIED ||
                              w.collectives().bytes() == 0)) {
    return c.error("workload.collectives", "needs a kind and a size in bytes");
  }
  if (w.bytes_scale() < 0) return c.error("workload.bytes_scale", "must be positive");
  return check_workload_source(s, world, c);
}

// Several jobs at once: each a name of its own, hosts of the testbed no other job has, and a
// workload that passes the workload's checks for its own ranks.
Status check_jobs(const v1::Scenario& s, uint32_t testbed_hosts, const Checker& c) {
  const v1::Workload& w = s.workload();
  if (!w.trace().empty() || w.has_synth() || !w.synth_model().empty() || w.has_collectives() || w.has_incast()) {
    return c.error("workload", "give either a workload or jobs, not both");
  }
  std::set<std::string> names;
  std::map<uint32_t, std::string> owner;  // host -> the job on it
  for (int i = 0; i < s.jobs_size(); ++i) {
    const v1::Job& job = s.jobs(i);
    const std::string at = fmt::format("jobs[{}]", i);
    if (job.name().empty()) return c.error(at + ".name", "every job needs a name");
    if (!names.insert(job.name()).second) return c.error(at + ".name", fmt::format("'{}' is used twice", job.name()));
    if (job.hosts_size() == 0) return c.error(at + ".hosts", "a job needs hosts to run on");
    if (job.has_dscp()) {
      v1::TransportSettings own;
      own.set_dscp(job.dscp());
      if (auto p = replay::transport_problem(own)) return c.error(at + ".dscp", p->what);
    }
    for (int k = 0; k < job.hosts_size(); ++k) {
      const uint32_t h = job.hosts(k);
      if (h >= testbed_hosts) {
        return c.error(fmt::format("{}.hosts[{}]", at, k),
                       fmt::format("host {} is not in the testbed (hosts 0..{})", h, testbed_hosts - 1));
      }
      if (auto [it, fresh] = owner.emplace(h, job.name()); !fresh) {
        return c.error(fmt::format("{}.hosts[{}]", at, k),
                       it->second == job.name() ? fmt::format("host {} is listed twice", h)
                                                : fmt::format("host {} already runs job '{}'", h, it->second));
      }
    }
    v1::Scenario as_one = s;
    as_one.clear_jobs();
    *as_one.mutable_workload() = job.workload();
    const uint32_t world = static_cast<uint32_t>(job.hosts_size()) * s.testbed().ranks_per_host();
    if (Status w = check_workload(as_one, world, c.nested("workload", at + ".workload")); !w.ok()) return w;
  }
  return {};
}

// In lossless mode a switch pauses and holds only the lossless priority's queue, and it queues a
// frame by its DSCP: RoCE at another DSCP would ride a lossy queue beside the paused one.
Status check_lossless_dscp(const v1::Scenario& s, const Checker& c) {
  if (s.testbed().agents_size() > 0) return {};
  const testbed::ResolvedPfc pfc = testbed::resolve_pfc(s.testbed().virtual_());
  const auto problem = [&pfc](const v1::TransportSettings& t, bool lossless) -> std::optional<std::string> {
    const uint32_t dscp = replay::with_defaults(t).dscp();
    if (!lossless || testbed::priority_of_dscp(dscp) == pfc.priority) return std::nullopt;
    return fmt::format("DSCP {} rides priority {}, not the lossless priority {} (testbed.virtual.pfc.priority)",
                       dscp, testbed::priority_of_dscp(dscp), pfc.priority);
  };
  if (s.runs().baseline()) {
    if (auto p = problem(s.transport(), pfc.lossless)) return c.error("transport.dscp", *p);
  }
  for (int i = 0; i < s.runs().variants_size(); ++i) {
    const v1::Variant& v = s.runs().variants(i);
    v1::TransportSettings merged = s.transport();
    merged.MergeFrom(v.transport());
    if (auto p = problem(merged, v.has_lossless() ? v.lossless() : pfc.lossless)) {
      return c.error(v.transport().has_dscp() ? fmt::format("runs.variants[{}].transport.dscp", i) : "transport.dscp", *p);
    }
  }
  return {};
}

Status check(const v1::Scenario& s, const Checker& c) {
  if (s.name().empty()) return c.error("name", "a scenario needs a name");
  if (auto p = bounds_problem(s)) return c.error(p->field, p->what);
  if (s.runs().duration_ns() != 0 && s.runs().repetitions() != 0) {
    return c.error("runs.duration_ns", fmt::format("runs.duration_ns and runs.repetitions ({}) are both given: a "
                                                   "soak repeats until its duration is up; give one of them",
                                                   s.runs().repetitions()));
  }
  const v1::Testbed& t = s.testbed();
  const bool virtual_bed = t.agents_size() == 0;
  if (!virtual_bed && t.has_virtual_()) {
    return c.error("testbed", "give either a virtual testbed or agents, not both");
  }
  std::set<std::string> links;
  uint32_t hosts = 0;
  uint32_t nics_per_host = 1;  // a real host: the most interfaces any agent lists
  if (virtual_bed) {
    if (auto e = testbed::check_port_profiles(t.virtual_())) return c.error("testbed.virtual." + e->field, e->what);
    // Lossless settings are checked as they will run: a variant may turn lossless mode on.
    v1::VirtualTestbedSpec as_run = t.virtual_();
    for (const v1::Variant& v : s.runs().variants()) {
      if (v.lossless()) as_run.mutable_pfc()->set_lossless(true);
    }
    if (auto e = testbed::check_pfc(as_run)) return c.error("testbed.virtual." + e->field, e->what);
    if (Status v = testbed::validate(t.virtual_()); !v.ok()) return c.error("testbed.virtual", v.message());
    if (auto e = testbed::check_switch_routes(t.virtual_())) return c.error("testbed.virtual." + e->field, e->what);
    hosts = t.virtual_().hosts();
    nics_per_host = t.virtual_().nics_per_host();
    // The fabric's links as its plan cables them ("leaf0-spine1"; 3-tier: "spine2-super0" too).
    auto plan = testbed::plan_testbed(t.virtual_());
    if (!plan.ok()) return c.error("testbed.virtual", plan.status().message());
    for (const testbed::PlannedLink& l : plan->links) {
      const report::FabricLink named = testbed::name_link(*plan, l);
      if (!named.host_link) links.insert(named.name);
    }
  } else {
    hosts = static_cast<uint32_t>(t.agents_size());
    for (int i = 0; i < t.agents_size(); ++i) {
      nics_per_host = std::max(nics_per_host, static_cast<uint32_t>(t.agents(i).interfaces_size()));
      if (t.agents(i).address().empty()) {
        return c.error(fmt::format("testbed.agents[{}].address", i), "an agent needs an address");
      }
    }
  }
  for (uint32_t h = 0; h < hosts; ++h) links.insert(fmt::format("h{}", h));
  if (t.port() != "af_xdp" && t.port() != "af_packet") {
    return c.error("testbed.port", fmt::format("'{}' is not af_xdp or af_packet", t.port()));
  }
  if (s.jobs_size() == 0) {
    if (Status w = check_workload(s, hosts * t.ranks_per_host(), c); !w.ok()) return w;
  } else if (Status j = check_jobs(s, hosts, c); !j.ok()) {
    return j;
  }
  if (s.runs().alone() && s.jobs_size() == 0) {
    return c.error("runs.alone", "runs each of several jobs by itself: it needs jobs");
  }
  if (s.runs().alone() && !s.runs().baseline()) {
    return c.error("runs.alone", "sets each job alone against all jobs together in the baseline: set runs.baseline");
  }
  std::set<std::string> fault_names;
  for (int i = 0; i < s.faults_size(); ++i) {
    const v1::Fault& f = s.faults(i);
    const std::string at = fmt::format("faults[{}]", i);
    if (f.name().empty()) return c.error(at + ".name", "every fault needs a name");
    if (!fault_names.insert(f.name()).second) {
      return c.error(at + ".name", fmt::format("'{}' is used twice", f.name()));
    }
    if (f.name().find(faults::kOccurrenceMark) != std::string::npos) {
      return c.error(at + ".name", fmt::format("'{}': '{}' marks the occurrences of a recurring fault (\"{}\")",
                                               f.name(), faults::kOccurrenceMark,
                                               faults::occurrence_name("flap", 2)));
    }
    if (f.name().find(faults::kPhaseMark) != std::string::npos) {
      return c.error(at + ".name", fmt::format("'{}': '{}' names the phases of a link failure (\"{}\")", f.name(),
                                               faults::kPhaseMark, faults::phase_name("flap", faults::kDetectionPhase)));
    }
    if (f.kind() == v1::Fault::KIND_UNSPECIFIED) return c.error(at + ".kind", "missing");
    if (f.mtbf_ns() != 0 && f.duration_ns() == 0) {
      return c.error(at + ".duration_ns", "a recurring fault (mtbf_ns) needs a duration: how long each "
                                          "occurrence lasts (its repair time)");
    }
    const std::string link = f.link().substr(0, f.link().find('.'));
    if (!virtual_bed && (link.rfind("leaf", 0) == 0 || link.rfind("spine", 0) == 0 || link.rfind("super", 0) == 0)) {
      // Agents run on hosts; the switches of a real fabric are not collide's to touch.
      return c.error(at + ".link", fmt::format("'{}' is a fabric (switch) link: on a real testbed only "
                                               "host links (h0, h1, ...) can be faulted",
                                               f.link()));
    }
    auto host_link = testbed::parse_host_link(f.link());
    if (!host_link.ok()) return c.error(at + ".link", host_link.status().message());
    if (host_link->has_value()) {
      // A host link names one of the host's NICs ("h1.nic2"); "h1" alone is its NIC 0.
      Status nic = testbed::check_host_link(f.link(), **host_link, hosts, nics_per_host);
      if (!nic.ok()) return c.error(at + ".link", nic.message());
    } else if (!links.count(link)) {
      return c.error(at + ".link", fmt::format("no link '{}' in this testbed", f.link()));
    }
    if (!virtual_bed) {
      if (Status real = check_real_host_fault(f, t, at, c); !real.ok()) return real;
    }
    if (f.probability() < 0 || f.probability() > 1) {
      return c.error(at + ".probability", "must be within 0..1 (or 0%..100%)");
    }
    const bool needs_probability = f.kind() == v1::Fault::KIND_LOSS ||
                                   f.kind() == v1::Fault::KIND_BURST_LOSS ||
                                   f.kind() == v1::Fault::KIND_CORRUPT ||
                                   f.kind() == v1::Fault::KIND_ECN_MARK;
    if (needs_probability && f.probability() == 0) {
      return c.error(at + ".probability", "this kind of fault needs a probability");
    }
    if (f.kind() == v1::Fault::KIND_BURST_LOSS && f.mean_burst() < 1) {
      return c.error(at + ".mean_burst", "burst loss needs a mean burst of at least 1 packet");
    }
    if (f.kind() == v1::Fault::KIND_RATE_LIMIT && f.rate_gbps() <= 0) {
      return c.error(at + ".rate_gbps", "a rate limit needs a positive rate");
    }
    // A rate limit nests its tbf under a port's root tbf; with a lossy queue the switch ports' root
    // is an HTB of two queues (port_queue.h), which it cannot yet go under.
    if (f.kind() == v1::Fault::KIND_RATE_LIMIT && virtual_bed && virtual_testbed_to_build(s).pfc().lossy_queue()) {
      return c.error(at + ".kind", "a rate limit is not available yet on a testbed whose switch ports have a "
                                   "queue per priority (pfc.lossy_queue, or traffic off the lossless priority)");
    }
    if ((f.kind() == v1::Fault::KIND_LINK_FLAP || f.kind() == v1::Fault::KIND_BLACKHOLE) &&
        f.duration_ns() == 0) {
      return c.error(at + ".duration_ns", "a flap or blackhole needs a duration");
    }
    if (f.detection_ns() != 0 || f.has_convergence_ns()) {
      const std::string field = at + (f.detection_ns() != 0 ? ".detection_ns" : ".convergence_ns");
      if (f.kind() != v1::Fault::KIND_LINK_FLAP || host_link->has_value() || link.rfind("leaf", 0) != 0) {
        return c.error(field, "the phases of a link failure (detection, convergence) belong to a link-flap "
                              "on a fabric link (leaf0-spine1)");
      }
      if (t.virtual_().pods() > 1) {
        return c.error(field, "the phases of a link failure are modeled on a 2-tier fabric: not with pods yet");
      }
      if (t.virtual_().routing() == v1::VirtualTestbedSpec::ROUTING_BGP) {
        return c.error(field, "with routing: bgp, BFD detects a failed link and BGP converges around it: leave "
                              "the modeled phases out (a blackhole fails the link silently, a link-flap with loss "
                              "of signal) and set testbed.virtual.bgp's timers");
      }
      if (f.detection_ns() >= f.duration_ns()) {
        return c.error(field, "detection must end within the flap's duration_ns (the link then goes down)");
      }
    }
    // Played by the host's replayer, not the fabric: they need a host ("h1"), not a fabric link.
    const bool host_fault = f.kind() == v1::Fault::KIND_SLOW_RECEIVER || f.kind() == v1::Fault::KIND_SEND_DELAY;
    if (host_fault && link.rfind("leaf", 0) == 0) {
      return c.error(at + ".link", fmt::format("a {} acts on a host: name one (h0, h1, ...), not the "
                                               "fabric link '{}'",
                                               f.kind() == v1::Fault::KIND_SLOW_RECEIVER ? "slow receiver" : "send delay",
                                               f.link()));
    }
    if (f.kind() == v1::Fault::KIND_SLOW_RECEIVER && f.duration_ns() == 0) {
      return c.error(at + ".duration_ns", "a slow receiver needs a duration (how long it stops draining)");
    }
    if (f.kind() == v1::Fault::KIND_SEND_DELAY && f.delay_ns() == 0) {
      return c.error(at + ".delay_ns", "a send delay needs a delay");
    }
    if (f.kind() == v1::Fault::KIND_PFC_STORM) {
      std::string field;
      if (auto storm = faults::storm_options(f, &field); !storm.ok()) return c.error(at + "." + field, storm.status().message());
    }
  }
  for (int i = 0; i < s.runs().variants_size(); ++i) {
    const v1::Variant& v = s.runs().variants(i);
    if (v.name().empty()) return c.error(fmt::format("runs.variants[{}].name", i), "missing");
    if (v.name().rfind(kAlonePrefix, 0) == 0) {
      return c.error(fmt::format("runs.variants[{}].name", i),
                     fmt::format("'{}': names starting with '{}' are the runs of one job alone", v.name(), kAlonePrefix));
    }
    if (v.has_lossless() && !virtual_bed) {
      return c.error(fmt::format("runs.variants[{}].lossless", i),
                     "chooses a virtual testbed's lossless mode; real switches run PFC as configured");
    }
    if (v.has_pfc_watchdog() && !virtual_bed) {
      return c.error(fmt::format("runs.variants[{}].pfc_watchdog", i),
                     "turns a virtual testbed's PFC watchdog off; a real switch's is configured on the switch");
    }
    if (v.pfc_watchdog() && !t.virtual_().pfc().has_watchdog()) {
      return c.error(fmt::format("runs.variants[{}].pfc_watchdog", i),
                     "there is no watchdog to run: set testbed.virtual.pfc.watchdog");
    }
    if (v.has_load_balancing() && !virtual_bed) {
      return c.error(fmt::format("runs.variants[{}].load_balancing", i),
                     "chooses a virtual testbed's balancing; real switches balance as configured");
    }
    if (auto conflict = testbed::routes_conflict_with(v.load_balancing());
        conflict && v.has_load_balancing() && t.virtual_().routes_size() > 0) {
      return c.error(fmt::format("runs.variants[{}].load_balancing", i), "testbed.virtual.routes " + *conflict);
    }
    for (int j = 0; j < v.faults_size(); ++j) {
      if (!fault_names.count(v.faults(j))) {
        return c.error(fmt::format("runs.variants[{}].faults[{}]", i, j),
                       fmt::format("no fault named '{}'", v.faults(j)));
      }
    }
  }
  if (Status leaves = check_ring_order_leaves(s, c); !leaves.ok()) return leaves;
  if (Status dscp = check_lossless_dscp(s, c); !dscp.ok()) return dscp;
  if (!s.runs().baseline() && s.runs().variants_size() == 0) {
    return c.error("runs", "nothing to run: set baseline or add variants");
  }
  return check_expectations(s, [&c](const std::string& field, const std::string& what) {
    return c.error(field, what);
  });
}

}  // namespace

Status validate_scenario(const v1::Scenario& scenario, const std::string& source) {
  return check(scenario, Checker(source, nullptr));
}

Result<v1::Scenario> load_scenario_document(const YAML::Node& document, const std::string& path) {
  v1::Scenario scenario;
  config::FieldLines lines;
  COLLIDE_RETURN_IF_ERROR(config::parse_yaml_node(document, path, scenario, &lines));
  if (auto p = written_zero_problem(scenario, lines)) return Checker(path, &lines).error(p->field, p->what);
  apply_defaults(scenario);
  // Runs may start from another folder: keep each synthesized job's spec as a full path.
  const auto resolve = [&](v1::Workload& w, const std::string& field) -> Status {
    if (!w.has_synth()) return {};
    auto model = resolve_model_spec(w.synth().model(), std::filesystem::path(path).parent_path());
    if (!model.ok()) {
      return Checker(path, &lines)
          .error(lines.count(field + ".synth.model") ? field + ".synth.model" : field + ".synth_model",
                 model.status().message());
    }
    w.mutable_synth()->set_model(*model);
    return {};
  };
  COLLIDE_RETURN_IF_ERROR(resolve(*scenario.mutable_workload(), "workload"));
  for (int i = 0; i < scenario.jobs_size(); ++i) {
    COLLIDE_RETURN_IF_ERROR(resolve(*scenario.mutable_jobs(i)->mutable_workload(), fmt::format("jobs[{}].workload", i)));
  }
  COLLIDE_RETURN_IF_ERROR(check(scenario, Checker(path, &lines)));
  return scenario;
}

Result<v1::Scenario> load_scenario(const std::string& path) {
  auto document = config::read_yaml_file(path);
  if (!document.ok()) return document.status();
  return load_scenario_document(*document, path);
}

}  // namespace collide::orchestrator
