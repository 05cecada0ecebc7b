#include "orchestrator/run/local_runner.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collide/agent.pb.h"
#include "common/units.h"
#include "orchestrator/faults/fault_nic.h"
#include "orchestrator/control/certs.h"
#include "orchestrator/faults/occurrence_name.h"
#include "orchestrator/faults/recurring_faults.h"
#include "orchestrator/metrics/registry.h"
#include "orchestrator/report/collective_times.h"
#include "orchestrator/replay/transport_options.h"
#include "orchestrator/run/agent_fleet.h"
#include "orchestrator/run/op_catalog.h"
#include "orchestrator/run/real_host_placement.h"
#include "orchestrator/run/roofline.h"
#include "orchestrator/run/workload.h"
#include "orchestrator/scenario/jobs.h"
#include "orchestrator/scenario/switch_queues.h"
#include "orchestrator/testbed/fabric_balancing.h"
#include "orchestrator/testbed/link_counters.h"
#include "orchestrator/testbed/pfc_settings.h"
#include "orchestrator/testbed/pfc_switches.h"
#include "orchestrator/testbed/port_ecn_marker.h"
#include "orchestrator/testbed/port_telemetry.h"
#include "orchestrator/testbed/link_names.h"
#include "orchestrator/testbed/run_nics.h"
#include "orchestrator/testbed/virtual_testbed.h"
#include "replayer/engine/entropy_port.h"
#include "traces/op_types.h"

namespace collide::orchestrator {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace tb = testbed;

constexpr const char* kInterrupted = "collide run was interrupted by a signal";

struct Run {
  std::string name;
  // The variant's faults as this run arms them: a recurring fault as its occurrences.
  std::vector<v1::Fault> faults;
  v1::TransportSettings transport;
  uint32_t repetition = 0;
  tb::LoadBalancing balancing = v1::VirtualTestbedSpec::LOAD_BALANCING_ECMP;
  std::string alone_job;  // runs.alone: this job by itself, the others idle; empty: the whole workload
  bool lossless = false;  // a virtual testbed's lossless mode (PFC) for this run
  bool pfc_watchdog = true;  // false: lossless without the testbed's PFC watchdog
  std::vector<std::string> notes{};  // what the run's recurring faults drew, for its progress lines
};

// The variant's transport: the scenario's, with every field the variant sets taking its place
// (proto3 merging copies exactly the fields that differ from their defaults).
v1::TransportSettings merged(const v1::TransportSettings& base, const v1::TransportSettings& over) {
  v1::TransportSettings t = base;
  t.MergeFrom(over);
  return t;
}

// A recurring fault's occurrences in one run, and a line saying when they come.
void add_occurrences(const v1::Fault& f, uint64_t runs_seed, std::chrono::nanoseconds horizon, Run& r) {
  const faults::Occurrences drawn = faults::draw_occurrences(f, runs_seed, r.repetition, horizon);
  r.faults.insert(r.faults.end(), drawn.faults.begin(), drawn.faults.end());
  if (f.mtbf_ns() == 0) return;
  std::vector<std::string> starts;
  for (const v1::Fault& o : drawn.faults) starts.push_back(fmt::format("{:.3f}s", static_cast<double>(o.start_ns()) / 1e9));
  std::string note = starts.empty() ? fmt::format("{}: no occurrence this run", f.name())
                                    : fmt::format("{}: {} occurrence(s), at {}", f.name(), starts.size(),
                                                  fmt::join(starts, ", "));
  if (drawn.capped) {
    note += fmt::format(" (at most {} a run: from {:.3f}s on, this run sees no more)", faults::kMaxOccurrencesPerRun,
                        std::chrono::duration<double>(drawn.drawn_until).count());
  }
  r.notes.push_back(std::move(note));
}

// One iteration: repetition `rep` of the baseline and of every variant, in that order. Recurring
// faults draw their occurrences up to `horizon` (the longest a run may take).
std::vector<Run> plan_iteration(const v1::Scenario& s, uint32_t rep, std::chrono::nanoseconds horizon) {
  std::vector<Run> runs;
  const tb::LoadBalancing lb = s.testbed().virtual_().load_balancing();
  const bool lossless = s.testbed().virtual_().pfc().lossless();
  if (s.runs().baseline()) runs.push_back({"baseline", {}, s.transport(), rep, lb, "", lossless});
  // Each job alone right after all of them together: the two see the same machine load.
  if (s.runs().alone()) {
    for (const v1::Job& job : s.jobs()) {
      runs.push_back({alone_variant(job.name()), {}, s.transport(), rep, lb, job.name(), lossless});
    }
  }
  for (const v1::Variant& v : s.runs().variants()) {
    Run r{v.name(), {}, merged(s.transport(), v.transport()), rep,
          v.has_load_balancing() ? v.load_balancing() : lb, "", v.has_lossless() ? v.lossless() : lossless,
          !v.has_pfc_watchdog() || v.pfc_watchdog()};
    for (const std::string& name : v.faults()) {
      for (const v1::Fault& f : s.faults()) {
        if (f.name() == name) add_occurrences(f, s.runs().seed(), horizon, r);
      }
    }
    runs.push_back(std::move(r));
  }
  return runs;
}

// "2h 5m 3s", "42s": what is left of a soak, to the second.
std::string time_left(Clock::duration left) {
  const auto total = std::chrono::duration_cast<std::chrono::seconds>(std::max(left, Clock::duration::zero())).count();
  const auto h = total / 3600, m = total / 60 % 60, sec = total % 60;
  if (h > 0) return fmt::format("{}h {}m {}s", h, m, sec);
  if (m > 0) return fmt::format("{}m {}s", m, sec);
  return fmt::format("{}s", sec);
}

// The host whose agent arms a fault: the host a host link ("h1", "h1.nic2") belongs to; fabric
// links go to the first agent.
uint32_t host_of_fault(const v1::Fault& f) {
  auto name = tb::parse_host_link(f.link());
  // A name that does not read goes, like any host past the last, to the first agent, which says
  // what is wrong with it.
  if (!name.ok()) return UINT32_MAX;
  return name->has_value() ? (*name)->host : 0;
}

// What every run sends each agent, before the per-run fields.
struct Placement {
  uint32_t per_host = 0;
  uint32_t nics_per_host = 1;
  uint32_t world = 0;
  std::string trace_bytes;
  std::map<std::string, std::string> alone_trace_bytes;  // by job: runs.alone's traces
  v1::VirtualTestbedSpec testbed;        // empty for remote agents
  const tb::TestbedPlan* bed = nullptr;  // the virtual testbed's plan; null for remote agents
  bool trace_timing = false;       // the workload's compute gaps, not back to back
  uint64_t runs_seed = 0;          // Runs.seed: varies the faults' random draws
  OpCatalog catalog;               // what completion records leave out: datatype, iteration...
  RealHostPlacement real;          // empty on a virtual testbed
  // The leaf each host hangs under (a topology-aware ring order groups by it); empty: not known.
  std::vector<uint32_t> leaf_of_host;
  std::map<uint32_t, uint32_t> dscp_of_host;  // the hosts of jobs with a DSCP of their own
};

// A fault's window as its agent measured it, onto this process's clock; a fault armed on several
// hosts held from the first start to the last end. A window that never opened stays 0.
void merge_window(report::FaultWindow& w, const control::ClockOffset& clock, uint64_t start_ns,
                  uint64_t end_ns) {
  if (start_ns == 0) return;
  const auto here = [&](uint64_t t) {
    return static_cast<uint64_t>(std::max<int64_t>(1, clock.to_orchestrator(t)));
  };
  const uint64_t start = here(start_ns), end = end_ns == 0 ? 0 : here(end_ns);
  w.start_ns = w.start_ns == 0 ? start : std::min(w.start_ns, start);
  w.end_ns = std::max(w.end_ns, end);
}

v1::PrepareRun prepare_request(const Placement& p, const AgentHandle& a, const Run& run,
                               uint32_t run_index, const LocalRunOptions& o) {
  v1::PrepareRun r;
  r.set_run_index(run_index);
  r.set_host(a.host);
  r.set_trace(run.alone_job.empty() ? p.trace_bytes : p.alone_trace_bytes.at(run.alone_job));
  for (uint32_t rank = a.host * p.per_host; rank < (a.host + 1) * p.per_host; ++rank) r.add_ranks(rank);
  r.set_ranks_per_host(p.per_host);
  r.set_nics_per_host(p.nics_per_host);
  *r.mutable_transport() = run.transport;
  if (auto job = p.dscp_of_host.find(a.host); job != p.dscp_of_host.end()) r.mutable_transport()->set_dscp(job->second);
  for (const v1::Fault& f : run.faults) {
    if (host_of_fault(f) == a.host || (host_of_fault(f) >= p.world && a.index == 0)) *r.add_faults() = f;
  }
  r.set_repetition(run.repetition);
  r.set_runs_seed(p.runs_seed);
  r.set_lease_ms(static_cast<uint64_t>(o.lease.count()));
  r.set_run_timeout_s(o.run_timeout_s);
  r.set_trace_timing(p.trace_timing);
  if (!p.real.endpoints.empty()) {
    for (const v1::RankEndpoint& e : p.real.endpoints) *r.add_rank_endpoints() = e;
    r.set_nics_per_host(p.real.nics_per_host);
    r.set_queues_per_nic(p.real.queues_per_nic);
    for (const RealHostNic& nic : p.real.nics_of_host.at(a.host)) {
      v1::RunNic* n = r.add_nics();
      n->set_interface(nic.interface);
      n->set_port(nic.port);
    }
    r.set_lcore(a.host % 2);
  }
  if (p.bed != nullptr) {
    // A virtual host: every NIC in rail order, each its own port towards its rail's leaf.
    *r.mutable_testbed() = p.testbed;
    r.mutable_testbed()->mutable_pfc()->set_lossless(run.lossless);  // the variant's choice
    for (v1::RunNic& nic : tb::run_nics(*p.bed, a.host)) *r.add_nics() = std::move(nic);
    r.set_netns(tb::host_namespace(p.bed->name, a.host));
    r.set_lcore(a.host % 2);
  }
  for (uint32_t leaf : p.leaf_of_host) r.add_leaf_of_host(leaf);
  return r;
}

// The switches' PFC counters onto their ports' queue statistics (a port without them gets a row
// of its own).
void add_pfc_counters(const std::vector<tb::PfcPortResult>& pfc, uint32_t priority,
                      std::vector<report::PortStats>& ports) {
  for (const tb::PfcPortResult& r : pfc) {
    auto it = std::find_if(ports.begin(), ports.end(),
                           [&](const report::PortStats& p) { return p.link == r.link && p.end == r.end; });
    if (it == ports.end()) {
      ports.emplace_back();
      it = ports.end() - 1;
      it->link = r.link;
      it->end = r.end;
    }
    it->lossless = true;
    it->pfc_priority = priority;
    it->pause_frames = r.counters.pause_frames;
    it->paused_ns = r.counters.paused_ns;
    it->pause_frames_sent = r.counters.pause_frames_sent;
    it->deadlocks = r.counters.deadlocks;
    it->deadlocked_ns = r.counters.deadlocked_ns;
    for (const tb::WatchdogEvent& e : r.counters.watchdog_events) {
      it->watchdog_events.push_back({e.held_since_ns, e.detected_ns, e.restored_ns});
    }
  }
}

// One run across the fleet: prepare everywhere, start together, collect.
class RunDriver {
 public:
  RunDriver(std::vector<AgentHandle>& agents, const LocalRunOptions& o) : agents_(agents), o_(o) {}

  // The run's result; an error when the run could not be set up. `agent_failure` is set when an
  // agent was lost on the way (the result then holds what the others recorded).
  // `heading` is the run's first progress line ("run 3/4: loss (repetition 2)").
  Result<report::RunResult> drive(const Placement& p, const Run& run, uint32_t index, const std::string& heading,
                                  std::string& agent_failure);

 private:
  void progress(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }
  // The run's end in the live metrics: each host's timeouts, every collective's completion time,
  // what each fault did.
  void publish_run_end(const report::RunResult& result) const;
  void heartbeat_if_due();
  bool interrupted() const { return o_.interrupted != nullptr && o_.interrupted->load(); }
  // Ends the run because this process was told to stop: agents stop, faults are disarmed.
  void interrupt(std::string& agent_failure) {
    agent_failure = kInterrupted;
    progress(agent_failure);
    stop_others("collide run was interrupted");
  }
  // Stops every agent still in the run and collects what they hand back (faults disarmed).
  void stop_others(const std::string& reason);
  void lost(AgentHandle& a, const Status& why, std::string& agent_failure);

  std::vector<AgentHandle>& agents_;
  const LocalRunOptions& o_;
  Clock::time_point last_heartbeat_ = Clock::now();
  std::map<uint32_t, v1::RunCompletion> completions_;
  std::vector<bool> in_run_;
};

void RunDriver::heartbeat_if_due() {
  if (Clock::now() - last_heartbeat_ < o_.lease / 4) return;
  last_heartbeat_ = Clock::now();
  v1::AgentRequest beat;
  beat.mutable_heartbeat()->set_sent_ns(orchestrator_now_ns());
  for (AgentHandle& a : agents_) {
    if (a.channel) (void)a.channel->send(beat, 2s);  // a broken channel shows on the next receive
  }
}

void RunDriver::lost(AgentHandle& a, const Status& why, std::string& agent_failure) {
  agent_failure = fmt::format("{} failed: {}", a.name(), a.why_gone(why));
  a.channel.reset();
  in_run_[a.index] = false;
  progress(agent_failure);
  stop_others(fmt::format("{} failed", a.name()));
}

void RunDriver::stop_others(const std::string& reason) {
  v1::AgentRequest stop;
  stop.mutable_stop()->set_reason(reason);
  // Every agent hears first, so that their replays stop (and write what they recorded) together.
  std::vector<AgentHandle*> told;
  for (AgentHandle& a : agents_) {
    // One that already reported its completion has nothing left to stop (and would not answer).
    if (!a.channel || !in_run_[a.index] || completions_.count(a.index) != 0) continue;
    if (a.channel->send(stop, 2s).ok()) {
      told.push_back(&a);
    } else {
      in_run_[a.index] = false;
    }
  }
  for (AgentHandle* told_agent : told) {
    AgentHandle& a = *told_agent;
    const auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline) {
      auto reply = a.channel->receive_message<v1::AgentReply>(200ms);
      if (!reply.ok()) break;
      if (reply->has_value() && (*reply)->has_completion()) {
        completions_[a.index] = (*reply)->completion();
        break;
      }
    }
    in_run_[a.index] = false;
  }
}

Result<report::RunResult> RunDriver::drive(const Placement& p, const Run& run, uint32_t index,
                                           const std::string& heading, std::string& agent_failure) {
  in_run_.assign(agents_.size(), true);
  completions_.clear();
  report::RunResult result;
  result.variant = run.name;
  result.repetition = run.repetition;
  auto finish_failed = [&]() {
    result.failed = true;
    result.failure += agent_failure + "; ";
  };

  for (AgentHandle& a : agents_) {
    v1::AgentRequest prepare;
    *prepare.mutable_prepare() = prepare_request(p, a, run, index, o_);
    if (Status s = a.channel->send(prepare, 60s); !s.ok()) {
      lost(a, s, agent_failure);
      finish_failed();
      return result;
    }
  }
  // Every agent arms its faults and opens its port; wait until all are ready.
  for (AgentHandle& a : agents_) {
    const auto deadline = Clock::now() + 120s;
    bool ready = false;
    while (!ready) {
      heartbeat_if_due();
      if (interrupted()) {
        interrupt(agent_failure);
        finish_failed();
        return result;
      }
      if (Clock::now() > deadline) {
        lost(a, deadline_exceeded("not ready within 120 s"), agent_failure);
        finish_failed();
        return result;
      }
      auto reply = a.channel->receive_message<v1::AgentReply>(100ms);
      if (!reply.ok()) {
        lost(a, reply.status(), agent_failure);
        finish_failed();
        return result;
      }
      if (!reply->has_value()) continue;
      if ((*reply)->has_error()) {
        const std::string why = fmt::format("{}: {}", a.name(), (*reply)->error().message());
        stop_others("the run could not be prepared");
        return unavailable(why);
      }
      ready = (*reply)->has_prepared() && (*reply)->prepared().run_index() == index;
    }
  }

  // What the fabric's links carry is measured over the run: counters now, and again at its end.
  std::optional<tb::CounterSnapshot> counters_before;
  if (p.bed != nullptr) {
    auto read = tb::read_counters(*p.bed);
    if (read.ok()) {
      counters_before = std::move(read).value();
    } else {
      progress(fmt::format("  the fabric's link counters are left out of this run: {}", read.status().message()));
    }
  }
  // The switch ports' queues, sampled through the run on a thread of their own, and their ECN
  // marking, attached for the run.
  std::unique_ptr<tb::PortEcnMarkers> ecn_markers;  // before the telemetry that reads them
  std::unique_ptr<tb::PortTelemetry> port_telemetry;
  std::unique_ptr<tb::PfcSwitches> pfc_switches;
  uint32_t pfc_priority = 0;
  if (p.bed != nullptr) {
    auto markers = tb::PortEcnMarkers::attach(*p.bed);
    if (!markers.ok()) {
      stop_others("the switch ports' ECN marking could not be attached");
      return markers.status();
    }
    ecn_markers = std::move(markers).value();
    // Lossless mode: the switches' PFC, after the markers (their early drops never reach a queue,
    // so the ingress accounting must not count them) and before the first frame.
    if (run.lossless) {
      tb::ResolvedPfc pfc = tb::resolve_pfc(p.testbed);
      pfc.lossless = true;
      if (!run.pfc_watchdog) pfc.watchdog_detect = std::chrono::nanoseconds(0);
      auto started = tb::PfcSwitches::start(*p.bed, pfc);
      if (!started.ok()) {
        stop_others("lossless mode could not be started on the switches");
        return started.status().with_context("lossless mode");
      }
      pfc_switches = std::move(started).value();
      pfc_priority = pfc.priority;
    }
    // Only shaped ports queue (an unshaped veth has no qdisc to fill), and sampling costs CPU the
    // replays need: one `tc` per switch namespace every period, most of a core on a fabric of six
    // switches, enough to make unshaped runs' engines miss their timeouts.
    bool any_queue = false;
    for (const tb::PlannedLink& l : p.bed->links) any_queue = any_queue || l.a.queue.gbps > 0 || l.b.queue.gbps > 0;
    if (any_queue) {
      auto started = tb::PortTelemetry::start(*p.bed, tb::kPortSamplePeriod, tb::marker_counts(*ecn_markers));
      if (started.ok()) {
        port_telemetry = std::move(started).value();
      } else {
        progress(fmt::format("  the switch ports' queues are left out of this run: {}", started.status().message()));
      }
    }
  }

  // One instant for all, far enough ahead for the start messages to arrive.
  uint64_t margin_ns = 200'000'000;
  for (const AgentHandle& a : agents_) margin_ns += 2 * a.clock.round_trip_ns;
  const uint64_t start_at = orchestrator_now_ns() + margin_ns;
  result.started = std::chrono::system_clock::now() + std::chrono::nanoseconds(margin_ns);
  for (AgentHandle& a : agents_) {
    v1::AgentRequest start;
    start.mutable_start()->set_run_index(index);
    start.mutable_start()->set_start_at_agent_ns(static_cast<uint64_t>(a.clock.to_agent(start_at)));
    if (Status s = a.channel->send(start, 5s); !s.ok()) {
      lost(a, s, agent_failure);
      finish_failed();
      return result;
    }
  }
  progress(heading);
  for (const std::string& note : run.notes) progress("  " + note);
  if (o_.metrics != nullptr) o_.metrics->run_started(run.name, run.repetition);

  std::map<uint32_t, v1::RunProgress> latest;  // each agent's newest progress report
  auto last_line = Clock::now();
  bool peer_failed = false;  // a host's replay failed and the others were stopped
  const auto deadline = Clock::now() + std::chrono::seconds(static_cast<int64_t>(o_.run_timeout_s) + 60);
  while (completions_.size() < agents_.size()) {
    heartbeat_if_due();
    if (interrupted()) {
      interrupt(agent_failure);
      finish_failed();
      result.interrupted = true;
      break;
    }
    if (Clock::now() > deadline) {
      agent_failure = fmt::format("the run did not end within {} s", o_.run_timeout_s + 60);
      stop_others("the run took too long");
      finish_failed();
      break;
    }
    for (AgentHandle& a : agents_) {
      if (completions_.count(a.index) != 0) continue;
      auto reply = a.channel->receive_message<v1::AgentReply>(20ms);
      if (!reply.ok()) {
        lost(a, reply.status(), agent_failure);
        finish_failed();
        break;
      }
      if (!reply->has_value()) continue;
      const v1::AgentReply& r = **reply;
      if (r.has_progress()) {
        latest[a.index] = r.progress();
        // Live while the run goes: what a soak run's dashboard follows.
        if (o_.metrics != nullptr) {
          o_.metrics->host_progress(run.name, a.host,
                                    {r.progress().packets_sent(), r.progress().retransmitted_packets(),
                                     r.progress().ops_done()},
                                    r.progress().elapsed_s());
        }
      }
      if (r.has_completion()) {
        completions_[a.index] = r.completion();
        if (o_.metrics != nullptr) {
          const double elapsed = latest.count(a.index) != 0 ? latest[a.index].elapsed_s() : 0.0;
          o_.metrics->host_progress(run.name, a.host,
                                    {r.completion().packets_sent(), r.completion().retransmitted_packets(),
                                     static_cast<uint64_t>(r.completion().ops_size())},
                                    elapsed);
          o_.metrics->host_timeouts(run.name, a.host, r.completion().timeouts());
        }
      }
      if (r.has_error()) {
        v1::RunCompletion c;
        c.set_failure(fmt::format("{}: {}", a.name(), r.error().message()));
        completions_[a.index] = c;
      }
      // A host whose replay failed ends the job, as one rank's failure ends an NCCL job: the
      // others would wait for its ranks until the run timeout. Stop them now; what they recorded
      // comes back with their completions.
      if (completions_.count(a.index) != 0 && !completions_[a.index].ok() && !peer_failed) {
        peer_failed = true;
        progress(fmt::format("  {}", completions_[a.index].failure()));
        stop_others(fmt::format("{} failed", a.name()));
        break;
      }
    }
    if (!agent_failure.empty() || peer_failed) break;
    if (Clock::now() - last_line >= 2s) {
      last_line = Clock::now();
      double longest = 0;
      uint64_t ops = 0, sent = 0, resent = 0;
      for (const auto& [i, p] : latest) {
        longest = std::max(longest, p.elapsed_s());
        ops += p.ops_done();
        sent += p.packets_sent();
        resent += p.retransmitted_packets();
      }
      progress(fmt::format("  {:.1f} s, {}/{} hosts done; {} ops, {} packets sent, {} resent", longest,
                           completions_.size(), agents_.size(), ops, sent, resent));
    }
  }

  if (port_telemetry) {
    auto ports = port_telemetry->finish();
    if (ports.ok()) {
      result.ports = std::move(ports).value();
    } else {
      progress(fmt::format("  the switch ports' queues are left out of this run: {}", ports.status().message()));
    }
  }
  if (pfc_switches) {
    auto pfc = pfc_switches->finish();
    if (pfc.ok()) {
      add_pfc_counters(*pfc, pfc_priority, result.ports);
    } else {
      // The fabric was not lossless from the failure on: the run does not count as a lossless one.
      result.failed = true;
      result.failure += pfc.status().message() + "; ";
    }
  }
  if (counters_before) {
    auto after = tb::read_counters(*p.bed);
    if (after.ok()) {
      result.fabric_links = tb::link_traffic(*p.bed, *counters_before, *after);
    } else {
      progress(fmt::format("  the fabric's link counters are left out of this run: {}", after.status().message()));
    }
  }

  // Completion records onto this process's clock.
  std::map<std::string, report::FaultWindow> faults;
  for (const auto& [i, c] : completions_) {
    const AgentHandle& a = agents_[i];
    if (!c.ok()) {
      result.failed = true;
      result.failure += (c.failure().empty() ? "failed" : c.failure()) + "; ";
    }
    for (const v1::OpCompletion& op : c.ops()) {
      report::OpTiming t;
      t.rank = op.rank();
      t.op_index = op.op_index();
      if (auto kind = traces::parse_op_kind(op.kind()); kind.ok()) t.kind = *kind;
      t.comm = op.comm();
      t.comm_size = p.world;
      t.bytes = op.bytes();
      if (const OpCatalog::Entry* e = p.catalog.find(op.rank(), op.op_index())) {
        t.datatype = e->datatype;
        t.reduce_op = e->reduce_op;
        t.iteration = e->iteration;
        t.production_ns = e->production_ns;
        if (e->comm_size != 0) t.comm_size = e->comm_size;
      }
      t.start_ns = static_cast<uint64_t>(std::max<int64_t>(0, a.clock.to_orchestrator(op.start_ns())));
      t.end_ns = static_cast<uint64_t>(std::max<int64_t>(0, a.clock.to_orchestrator(op.end_ns())));
      t.failed = op.failed();
      result.ops.push_back(t);
    }
    for (const v1::NicTraffic& n : c.nics()) {
      result.nics.push_back(n);
      result.nics.back().set_host(a.host);
    }
    result.packets_sent += c.packets_sent();
    result.retransmitted_packets += c.retransmitted_packets();
    result.timeouts += c.timeouts();
    for (const v1::FaultCount& f : c.faults()) {
      report::FaultWindow& w = faults[f.name()];
      w.name = f.name();
      w.kind = f.kind();
      w.packets_matched += f.packets_matched();
      w.packets_acted += f.packets_acted();
      merge_window(w, a.clock, f.start_ns(), f.end_ns());
    }
  }
  if (completions_.size() < agents_.size() && !result.failed) finish_failed();
  for (auto& [name, w] : faults) result.faults.push_back(w);
  if (result.failed) progress(fmt::format("  failed: {}", result.failure));
  publish_run_end(result);
  return result;
}

void RunDriver::publish_run_end(const report::RunResult& result) const {
  if (o_.metrics == nullptr) return;
  if (!result.failed) {
    o_.metrics->job_completed(result.variant, static_cast<double>(report::job_completion_ns(result)) / 1e9);
  }
  for (const report::OpTiming& op : result.ops) {
    if (op.failed || op.end_ns < op.start_ns) continue;
    o_.metrics->collective_completed(result.variant, std::string(traces::op_kind_name(op.kind)),
                                     static_cast<double>(op.end_ns - op.start_ns) / 1e9);
  }
  for (const report::FaultWindow& f : result.faults) {
    const double held_s = f.end_ns > f.start_ns ? static_cast<double>(f.end_ns - f.start_ns) / 1e9 : 0.0;
    o_.metrics->fault_acted(result.variant, faults::fault_of_occurrence(f.name), f.packets_acted, held_s);
  }
  o_.metrics->run_ended(result.variant, result.failed);
}

// The job's roofline for each transport the runs use (a ring order changes what climbs to the
// spines), on a virtual testbed whose ops run back to back: the trace's own compute gaps are no
// time the fabric could save, and real hosts' port rates are not known here.
Result<std::map<std::string, report::Roofline>> rooflines(const std::vector<Run>& runs, const Placement& p,
                                                          const std::string& trace_path,
                                                          const std::function<void(const std::string&)>& progress) {
  std::map<std::string, report::Roofline> out;
  if (p.bed == nullptr || p.trace_timing) return out;
  auto placement = replayer::collectives::Placement::uniform(p.world, p.per_host, p.nics_per_host);
  if (!placement.ok()) return placement.status();
  placement->leaf_of_host = p.leaf_of_host;
  const NicPlaces places = nic_places(*p.bed);
  for (const Run& run : runs) {
    const std::string key = run.transport.SerializeAsString();
    if (!run.alone_job.empty() || out.contains(key)) continue;
    auto load = fabric_load(trace_path, *placement, run.transport, places);
    if (!load.ok()) return load.status().with_context(run.name + ": roofline");
    const report::Roofline r = roofline(*load, *p.bed);
    out[key] = r;
    if (r.known()) {
      progress(fmt::format("{}: roofline {:.3f} s ({}: {:.1f} MB at {:g} Gb/s)", run.name, r.seconds, r.bottleneck,
                           static_cast<double>(r.bottleneck_bytes) / 1e6, r.bottleneck_gbps));
    }
  }
  return out;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) return not_found("cannot read " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

Result<RunOutcome> run_locally(const v1::Scenario& s, const LocalRunOptions& o) {
  auto progress = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  const auto horizon = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(o.run_timeout_s));
  for (const Run& run : plan_iteration(s, 0, horizon)) {
    // The agents resolve the same settings with the same function: refuse now what they would.
    if (auto t = replay::resolve_transport(run.transport); !t.ok()) return t.status().with_context(run.name);
  }
  const bool remote = s.testbed().agents_size() > 0;
  const v1::VirtualTestbedSpec spec = virtual_testbed_to_build(s);
  const uint32_t hosts = remote ? static_cast<uint32_t>(s.testbed().agents_size()) : spec.hosts();
  Placement placement;
  placement.per_host = s.testbed().ranks_per_host();
  // Local rank i on NIC i % nics_per_host (rails); real hosts place their ranks on one NIC so far.
  if (!remote) placement.nics_per_host = spec.nics_per_host();
  placement.world = hosts * placement.per_host;
  // One setting for every rank: jobs that want trace timing get it, and ops without compute gaps
  // (generated collectives) run back to back either way.
  placement.trace_timing = s.workload().timing() == v1::Workload::TIMING_TRACE ||
                           std::any_of(s.jobs().begin(), s.jobs().end(), [](const v1::Job& j) {
                             return j.workload().timing() == v1::Workload::TIMING_TRACE;
                           });
  placement.runs_seed = s.runs().seed();
  for (const v1::Job& job : s.jobs()) {
    if (!job.has_dscp()) continue;
    for (uint32_t h : job.hosts()) placement.dscp_of_host[h] = job.dscp();
  }
  std::error_code made;
  std::filesystem::create_directories(o.work_dir, made);
  if (made) return unavailable(fmt::format("cannot create {}: {}", o.work_dir.string(), made.message()));

  Result<std::string> trace = std::string();
  if (s.jobs_size() > 0) {
    auto jobs = prepare_jobs_workload(s, placement.world, o.work_dir);
    if (!jobs.ok()) return jobs.status();
    for (const auto& [job, path] : jobs->alone) {
      auto alone = read_file(path);
      if (!alone.ok()) return alone.status();
      placement.alone_trace_bytes[job] = std::move(alone).value();
    }
    trace = jobs->together;
  } else {
    trace = prepare_workload(s, placement.world, o.work_dir);
  }
  if (!trace.ok()) return trace.status();
  auto bytes = read_file(*trace);
  if (!bytes.ok()) return bytes.status();
  placement.trace_bytes = std::move(bytes).value();
  auto catalog = OpCatalog::read(*trace);
  if (!catalog.ok()) return catalog.status();
  placement.catalog = std::move(catalog).value();

  // The testbed goes last (after the agents, whose faults sit on its links).
  std::unique_ptr<tb::VirtualTestbed> bed;
  std::vector<AgentHandle> agents;
  if (!remote) {
    auto plan = tb::plan_testbed(spec);
    if (!plan.ok()) return plan.status();
    progress(fmt::format("building testbed {}: {} hosts, {} leaves, {} spines{}", spec.name(), hosts, spec.leaves(),
                         spec.spines(),
                         spec.pods() > 1 ? fmt::format(" in {} pods, {} super-spines", spec.pods(), spec.super_spines())
                                         : ""));
    auto created = tb::VirtualTestbed::create(*plan);
    if (!created.ok()) return created.status();
    bed = std::move(created).value();
    placement.testbed = spec;
    placement.bed = &bed->plan();
    placement.leaf_of_host = tb::leaf_group_of_hosts(spec);
    const auto certs = o.work_dir / "certs";
    COLLIDE_RETURN_IF_ERROR(control::generate_certs(certs));
    std::vector<LocalAgentSpec> local;
    for (uint32_t h = 0; h < hosts; ++h) local.push_back({h, tb::host_namespace(plan->name, h)});
    auto started = start_local_agents(o.collide_binary, local, certs, o.work_dir);
    if (!started.ok()) return started.status();
    agents = std::move(started).value();
  } else {
    if (o.certs_dir.empty()) return invalid_argument("remote agents need --certs (ca.pem, orchestrator.pem, orchestrator.key)");
    std::vector<std::pair<uint32_t, std::string>> list;
    for (const v1::Agent& a : s.testbed().agents()) list.emplace_back(a.host(), a.address());
    auto connected = connect_agents(list, o.certs_dir);
    if (!connected.ok()) return connected.status();
    agents = std::move(connected).value();
    // The handshake: what each real host offers, then every rank placed on an address.
    std::map<uint32_t, v1::HostDescription> described;
    for (AgentHandle& a : agents) {
      const v1::Agent& spec = s.testbed().agents(static_cast<int>(a.index));
      auto d = describe_agent(a, std::vector<std::string>(spec.interfaces().begin(), spec.interfaces().end()));
      if (!d.ok()) return d.status().with_context(a.name());
      for (const v1::InterfaceDescription& i : d->interfaces()) {
        progress(fmt::format("{}: {} {} mac {} mtu {} speed {}", a.name(), i.name(), fmt::join(i.ipv4(), ","),
                             i.mac(), i.mtu(), i.speed_mbps() ? fmt::format("{} Mb/s", i.speed_mbps()) : "unknown"));
      }
      described[a.index] = std::move(d).value();
    }
    if (std::all_of(s.testbed().agents().begin(), s.testbed().agents().end(),
                    [](const v1::Agent& a) { return a.has_leaf(); })) {
      placement.leaf_of_host.assign(hosts, 0);
      for (const v1::Agent& a : s.testbed().agents()) {
        if (a.host() < hosts) placement.leaf_of_host[a.host()] = a.leaf();
      }
    }
    auto real = place_on_real_hosts(s, agents, described, placement.per_host);
    if (!real.ok()) return real.status();
    placement.real = std::move(real).value();
    // A fault on a NIC its host does not have is refused now, before any run (the baseline too).
    for (const v1::Fault& f : s.faults()) {
      const auto host = placement.real.nics_of_host.find(host_of_fault(f));
      if (host == placement.real.nics_of_host.end()) continue;  // the first agent names what is wrong
      std::vector<std::string> interfaces;
      for (const RealHostNic& nic : host->second) interfaces.push_back(nic.interface);
      if (auto nic = faults::own_nic_of_fault(f, interfaces); !nic.ok()) {
        return nic.status().with_context(fmt::format("host {}", host->first));
      }
    }
    for (const AgentHandle& a : agents) {
      std::vector<std::string> rails;
      for (const RealHostNic& nic : placement.real.nics_of_host.at(a.host)) rails.push_back(nic.interface);
      progress(fmt::format("{}: {} rank(s) on {} NIC(s) in rail order: {}", a.name(), placement.per_host,
                           rails.size(), fmt::join(rails, ", ")));
    }
  }
  COLLIDE_RETURN_IF_ERROR(measure_clocks(agents, 8));
  for (const AgentHandle& a : agents) {
    progress(fmt::format("{}: clock offset {:+.1f} us +- {:.1f} us", a.name(), a.clock.offset_ns / 1e3,
                         a.clock.error_bound_ns / 1e3));
  }

  RunOutcome outcome;
  // Every iteration runs the same variants; only the repetition differs.
  const std::vector<Run> first_iteration = plan_iteration(s, 0, horizon);
  // Declared after the testbed, so its links go before the namespaces they sit in.
  std::unique_ptr<tb::FabricBalancing> balancing;
  if (bed && std::any_of(first_iteration.begin(), first_iteration.end(), [](const Run& r) {
        return r.balancing != v1::VirtualTestbedSpec::LOAD_BALANCING_ECMP;
      })) {
    auto attached = tb::FabricBalancing::attach(bed->plan(), first_iteration.front().balancing, placement.runs_seed);
    if (!attached.ok()) return attached.status();
    balancing = std::move(attached).value();
  }
  auto roofline_of = rooflines(first_iteration, placement, *trace, progress);
  if (!roofline_of.ok()) return roofline_of.status();
  RunDriver driver(agents, o);
  // A soak (runs.duration_ns) starts iterations until its deadline, counted from the first one's
  // start; otherwise the scenario runs its repetitions.
  const bool soak = s.runs().duration_ns() != 0;
  const uint32_t repetitions = std::max(1u, s.runs().repetitions());
  const Clock::time_point deadline = Clock::now() + std::chrono::nanoseconds(s.runs().duration_ns());
  const size_t total = soak ? 0 : size_t{repetitions} * first_iteration.size();
  uint32_t index = 0;  // the run's number over the whole scenario
  bool stop = false;
  for (uint32_t rep = 0; !stop && (soak ? Clock::now() < deadline : rep < repetitions); ++rep) {
    if (soak) {
      progress(fmt::format("iteration {}: {} left of {}", rep + 1, time_left(deadline - Clock::now()),
                           units::format_duration(std::chrono::nanoseconds(s.runs().duration_ns()))));
    }
    const std::vector<Run> runs = plan_iteration(s, rep, horizon);
    for (size_t n = 0; n < runs.size(); ++n, ++index) {
      if (o.interrupted != nullptr && o.interrupted->load()) {
        outcome.agent_failure = kInterrupted;
        stop = true;
        break;
      }
      if (balancing) {
        const uint64_t seed = replayer::engine::entropy_seed(placement.runs_seed, runs[n].repetition);
        COLLIDE_RETURN_IF_ERROR(balancing->set(runs[n].balancing, seed));
        const tb::LoadBalancing before = n > 0 ? runs[n - 1].balancing : runs.back().balancing;
        if (index == 0 || runs[n].balancing != before) {
          progress(fmt::format("{}: load balancing {}", runs[n].name, tb::load_balancing_name(runs[n].balancing)));
        }
      }
      const std::string heading =
          soak ? fmt::format("run {}: {} (iteration {}, {} left)", index + 1, runs[n].name, rep + 1,
                             time_left(deadline - Clock::now()))
               : fmt::format("run {}/{}: {} (repetition {})", index + 1, total, runs[n].name, rep + 1);
      auto result = driver.drive(placement, runs[n], index, heading, outcome.agent_failure);
      if (!result.ok()) return result.status();
      if (runs[n].alone_job.empty()) {
        if (auto r = roofline_of->find(runs[n].transport.SerializeAsString()); r != roofline_of->end()) {
          result->roofline = r->second;
        }
      }
      if (o.run_finished) o.run_finished(*result, rep + 1);
      if (o.keep_runs) outcome.runs.push_back(std::move(result).value());
      if (!outcome.agent_failure.empty()) {  // the fleet is broken: no further runs
        stop = true;
        break;
      }
    }
  }
  // Taken down here, in the destructors' order (agents and their faults, the links' programs,
  // then the namespaces), so that a testbed left behind fails the run instead of the next one.
  agents.clear();
  balancing.reset();
  if (bed) {
    if (Status s = bed->remove(); !s.ok()) {
      outcome.teardown_failure = s.message();
      progress(s.message());
    }
  }
  return outcome;
}

}  // namespace collide::orchestrator
