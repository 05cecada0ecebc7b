#include "orchestrator/agent/host_run.h"

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "common/logging.h"
#include "common/netns.h"
#include "orchestrator/agent/next_hop.h"
#include "orchestrator/faults/fault_plan.h"
#include "orchestrator/faults/own_nic_faults.h"
#include "orchestrator/replay/lossless_request.h"
#include "orchestrator/testbed/testbed_plan.h"
#include "replayer/engine/entropy_port.h"

namespace collide::orchestrator::agent {
namespace {

using namespace std::chrono_literals;

// How long the agent waits for ARP towards one peer before it gives up on the run.
constexpr auto kNeighborTimeout = 3s;
// How long a replay told to stop gets to send what it recorded.
constexpr auto kStopGrace = 3s;
// How long the child gets to open its port and build its engine.
constexpr auto kReadyTimeout = 60s;
// How often the child reports progress, passed on to the orchestrator as it comes.
constexpr double kProgressEvery_s = 0.5;

// The run's faults, in the form the fault plan takes.
std::vector<const v1::Fault*> faults_of(const v1::PrepareRun& r) {
  std::vector<const v1::Fault*> out;
  for (const v1::Fault& f : r.faults()) out.push_back(&f);
  return out;
}

// Real hosts: the NICs' kernel interfaces in rail order; `why` says what needs them when one is
// missing.
Result<std::vector<std::string>> interfaces_of(const std::vector<v1::RunNic>& nics, const char* why) {
  std::vector<std::string> interfaces;
  for (const v1::RunNic& nic : nics) {
    if (nic.interface().empty()) return invalid_argument(why);
    interfaces.push_back(nic.interface());
  }
  return interfaces;
}

// Real hosts: per NIC, the next-hop MAC towards every peer rank through that NIC's interface,
// asked of this host's own tables (inside the host's namespace when it has one).
Result<std::vector<std::map<uint32_t, std::string>>> peer_macs(const v1::PrepareRun& r,
                                                               const std::vector<v1::RunNic>& nics,
                                                               const std::string& netns) {
  auto interfaces = interfaces_of(nics, "the run names rank addresses but no interface");
  if (!interfaces.ok()) return interfaces.status();
  auto scope = netns.empty() ? Result<std::unique_ptr<netns::Scope>>(std::unique_ptr<netns::Scope>())
                             : netns::Scope::enter(netns);
  if (!scope.ok()) return scope.status();
  const std::vector<v1::RankEndpoint> endpoints(r.rank_endpoints().begin(), r.rank_endpoints().end());
  return peer_macs_of_nics(*interfaces, r.host(), endpoints, [](const std::string& peer, const std::string& ifname) {
    return resolve_next_hop_mac(peer, ifname, kNeighborTimeout);
  });
}

}  // namespace

v1::ReplayRequest replay_request(const v1::PrepareRun& r, const HostRunDefaults& d,
                                 const std::string& trace_file,
                                 const std::vector<v1::RunNic>& nics,
                                 const std::vector<std::map<uint32_t, std::string>>& peer_macs_of_nic,
                                 std::vector<std::string>& drain_pauses,
                                 std::vector<std::string>& send_delays) {
  v1::ReplayRequest q;
  q.set_run_index(r.run_index());
  q.set_trace_file(trace_file);
  *q.mutable_ranks() = r.ranks();
  q.set_ranks_per_host(r.ranks_per_host());
  *q.mutable_leaf_of_host() = r.leaf_of_host();
  for (size_t n = 0; n < nics.size(); ++n) {
    v1::ReplayNic* nic = q.add_nics();
    nic->set_port(nics[n].port());
    nic->set_next_hop_mac(nics[n].next_hop_mac());
    if (nics[n].has_core()) nic->set_core(nics[n].core());
    *nic->mutable_queue_cores() = nics[n].queue_cores();
    if (n < peer_macs_of_nic.size()) {
      for (const auto& [rank, mac] : peer_macs_of_nic[n]) (*nic->mutable_peer_macs())[rank] = mac;
    }
  }
  q.set_netns(r.netns().empty() ? d.netns : r.netns());
  q.set_lcore(r.lcore());
  q.set_queues_per_nic(r.queues_per_nic());
  for (const std::string& a : d.eal_args) q.add_eal_args(a);
  *q.mutable_transport() = r.transport();
  if (r.testbed().hosts() > 0) q.set_addressing(v1::ReplayRequest::ADDRESSING_TESTBED);
  if (r.rank_endpoints_size() > 0) {
    q.set_addressing(v1::ReplayRequest::ADDRESSING_LIST);
    *q.mutable_rank_endpoints() = r.rank_endpoints();
  }
  // A shaped virtual NIC sends at its link's rate, as a real NIC's transmit scheduler does: the
  // engine paces its port, so what it has not sent yet stays with its QPs, where a DCQCN rate cut
  // or a pause still acts on it, instead of waiting in the host link's shaper queue (hundreds of
  // kilobytes that would reach the switch at line rate whatever the CNPs said). DCQCN starts at
  // that rate too, and its cuts bite from the first CNP on (from an assumed 100 Gb/s, the first
  // few cuts would leave the rate far above what the link lets through while the switch's queue
  // sits at its end).
  if (const double gbps = r.testbed().host_link_gbps(); gbps > 0) {
    q.set_pace_gbps(gbps);
    q.set_dcqcn_line_rate_gbps(gbps);
  }
  q.set_rx_ring_frames(r.testbed().host_rx_ring_frames());
  q.set_drain_buffer_frames(r.testbed().host_rx_buffer_frames());
  // A lossless fabric: the NICs pause their leaf ports while their receive side falls behind.
  if (const auto pfc = testbed::resolve_pfc(r.testbed()); pfc.lossless) {
    *q.mutable_lossless() = replay::lossless_receive(pfc);
  }
  q.set_trace_timing(r.trace_timing());
  q.set_entropy_seed(replayer::engine::entropy_seed(r.runs_seed(), r.repetition()));
  q.set_verify_payload(true);
  q.set_timeout_s(r.run_timeout_s());
  q.set_progress_every_s(kProgressEvery_s);
  // Slow receivers and send delays aimed at this host are the replayer's to play.
  for (const v1::Fault* f : orchestrator::faults::replayer_faults_of_host(faults_of(r), r.host())) {
    const bool pause = f->kind() == v1::Fault::KIND_SLOW_RECEIVER;
    (pause ? drain_pauses : send_delays).push_back(f->name());
    *(pause ? q.add_drain_pauses() : q.add_send_delays()) = orchestrator::faults::replayer_hook_window(*f);
  }
  return q;
}

Result<std::vector<v1::RunNic>> nics_of_run(const v1::PrepareRun& r, const HostRunDefaults& d) {
  std::vector<v1::RunNic> nics(r.nics().begin(), r.nics().end());
  if (nics.empty()) nics.emplace_back();  // the agent's own port
  const size_t queues = std::max<uint32_t>(1, r.queues_per_nic());
  if (!d.engine_cores.empty() && d.engine_cores.size() < nics.size() * queues) {
    return invalid_argument(fmt::format(
        "the agent's --engine-cores names {} cores for the run's {} engines ({} NICs x {} queues)",
        d.engine_cores.size(), nics.size() * queues, nics.size(), queues));
  }
  for (size_t n = 0; n < nics.size(); ++n) {
    if (nics[n].port().empty()) nics[n].set_port(d.port_spec);
    if (nics[n].port().empty()) {
      return invalid_argument("the run names no packet port and the agent has none (--port-spec)");
    }
    if (!nics[n].has_core() && !d.engine_cores.empty()) {
      nics[n].set_core(static_cast<uint32_t>(d.engine_cores[n * queues]));
      for (size_t q = 1; q < queues; ++q) {
        nics[n].add_queue_cores(static_cast<uint32_t>(d.engine_cores[n * queues + q]));
      }
    }
  }
  return nics;
}

Result<std::unique_ptr<HostRun>> HostRun::prepare(const v1::PrepareRun& request,
                                                  const HostRunDefaults& defaults) {
  if (request.ranks().empty()) return invalid_argument("a run with no ranks for this host");
  auto run_nics = nics_of_run(request, defaults);
  if (!run_nics.ok()) return run_nics.status();
  const std::vector<v1::RunNic> nics = std::move(run_nics).value();
  std::unique_ptr<HostRun> run(new HostRun());
  run->request_ = request;
  std::filesystem::create_directories(defaults.work_dir);
  const std::string stem = fmt::format("run-{}-host-{}", request.run_index(), request.host());
  run->trace_file_ = defaults.work_dir / (stem + ".trace");
  run->record_file_ = defaults.work_dir / (stem + ".completion.json");
  std::filesystem::remove(run->record_file_);
  {
    std::ofstream out(run->trace_file_, std::ios::binary | std::ios::trunc);
    out.write(request.trace().data(), static_cast<std::streamsize>(request.trace().size()));
    if (!out.good()) return unavailable(fmt::format("writing {}", run->trace_file_.string()));
  }

  const std::string netns = request.netns().empty() ? defaults.netns : request.netns();
  std::vector<std::map<uint32_t, std::string>> peer_macs_of_nic;
  if (request.rank_endpoints_size() > 0) {
    auto macs = peer_macs(request, nics, netns);
    if (!macs.ok()) return macs.status();
    peer_macs_of_nic = std::move(macs).value();
  }

  // Rules are loaded and attached now; their windows count from the go (start()).
  faults::ArmOptions arm;
  arm.repetition = request.repetition();
  arm.runs_seed = request.runs_seed();
  arm.start_now = false;
  const std::vector<const v1::Fault*> run_faults = faults_of(request);
  if (!run_faults.empty() && request.testbed().hosts() == 0) {
    // A real host: each fault goes on the NIC of its own that it names.
    auto interfaces = interfaces_of(nics, "faults on a real host need the run's interfaces");
    if (!interfaces.ok()) return interfaces.status();
    auto armed = faults::arm_own_nic_faults(run_faults, netns, *interfaces, std::move(arm));
    if (!armed.ok()) return armed.status();
    run->faults_ = std::move(armed).value();
  } else if (!run_faults.empty()) {
    auto plan = testbed::plan_testbed(request.testbed());
    if (!plan.ok()) return plan.status();
    auto armed = faults::arm_faults(run_faults, *plan, arm);
    if (!armed.ok()) return armed.status();
    run->faults_ = std::move(armed).value();
  }

  // The child must not outlive this agent, even if the agent is killed outright.
  // Its label (the run's trace file) tells in `ps` which run and host it serves.
  auto child = replay::ReplayChild::spawn({"setpriv", "--pdeathsig", "KILL", "--", defaults.collide_binary,
                                           "--log-level=warn", "replay-child",
                                           "--label=" + run->trace_file_.string()});
  if (!child.ok()) return child.status();
  run->replay_.emplace(std::move(child).value());
  v1::ReplayCommand command;
  *command.mutable_request() = replay_request(request, defaults, run->trace_file_.string(), nics, peer_macs_of_nic,
                                              run->drain_pause_faults_, run->send_delay_faults_);
  const Status sent = run->replay_->send(command);
  auto event = sent.ok() ? run->replay_->receive(kReadyTimeout) : Result<std::optional<v1::ReplayEvent>>(sent);
  const auto not_started = [&](const std::string& why) {
    return unavailable(fmt::format("the replay of host {} did not start: {}", request.host(), why));
  };
  if (!event.ok()) return not_started(event.status().message());
  if (!event->has_value()) return not_started("no answer within 60 s");
  if ((*event)->has_error()) return not_started((*event)->error().message());
  if (!(*event)->has_ready()) return not_started("it answered something other than ready");
  return run;
}

HostRun::~HostRun() {
  replay_.reset();  // kills it if it still runs
  faults_.reset();  // disarms
  std::error_code ec;
  std::filesystem::remove(trace_file_, ec);
}

Status HostRun::start() {
  v1::ReplayCommand go;
  go.mutable_go();
  COLLIDE_RETURN_IF_ERROR(replay_->send(go));
  if (faults_) COLLIDE_RETURN_IF_ERROR(faults_->start());
  started_ = true;
  started_at_ = std::chrono::steady_clock::now();
  return {};
}

void HostRun::drain_events(std::chrono::milliseconds wait) {
  while (replay_ && !exited_) {
    auto event = replay_->receive(wait);
    if (!event.ok()) {
      // Its end closed: it has sent all it will. Reap it.
      auto code = replay_->wait(10s);
      exit_code_ = code.ok() ? *code : -1;
      exited_ = true;
      return;
    }
    if (!event->has_value()) return;
    if ((*event)->has_progress()) progress_ = (*event)->progress();
    if ((*event)->has_completion()) completion_ = (*event)->completion();
    wait = std::chrono::milliseconds(0);
  }
}

v1::RunProgress HostRun::poll_progress() {
  drain_events(std::chrono::milliseconds(0));
  progress_.set_run_index(run_index());
  progress_.set_elapsed_s(elapsed_s());
  return progress_;
}

double HostRun::elapsed_s() const {
  return started_ ? std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count() : 0;
}

bool HostRun::finished() {
  drain_events(std::chrono::milliseconds(0));
  return exited_ || !replay_;
}

void HostRun::add_fault_counts(v1::RunCompletion& c) const {
  if (!faults_) return;
  // The windows the replay measured, by fault name; a replayer fault it never began held not at all.
  std::map<std::string, std::pair<uint64_t, uint64_t>> measured;
  for (const std::string& name : drain_pause_faults_) measured[name] = {0, 0};
  for (const std::string& name : send_delay_faults_) measured[name] = {0, 0};
  for (const v1::ReplayerFaultWindow& w : c.replayer_faults()) {
    const auto& names = w.send_delay() ? send_delay_faults_ : drain_pause_faults_;
    if (w.index() < names.size()) measured[names[w.index()]] = {w.start_ns(), w.end_ns()};
  }
  for (const report::FaultWindow& f : faults_->ground_truth()) {
    v1::FaultCount* out = c.add_faults();
    out->set_name(f.name);
    out->set_kind(f.kind);
    out->set_packets_matched(f.packets_matched);
    out->set_packets_acted(f.packets_acted);
    const auto it = measured.find(f.name);
    out->set_start_ns(it != measured.end() ? it->second.first : f.start_ns);
    out->set_end_ns(it != measured.end() ? it->second.second : f.end_ns);
  }
}

v1::RunCompletion HostRun::completion() {
  v1::RunCompletion c;
  if (completion_) {
    c = *completion_;
  } else {
    c.set_ok(false);
    c.set_failure(fmt::format("host {}: the replay ended without a completion (exit code {})",
                              request_.host(), exit_code_));
  }
  c.set_run_index(request_.run_index());
  c.clear_faults();
  add_fault_counts(c);
  keep_record(c);
  return c;
}

void HostRun::keep_record(const v1::RunCompletion& c) const {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(c, &json, options).ok()) return;
  std::ofstream out(record_file_, std::ios::trunc);
  out << json << "\n";
  if (!out.good()) logging::get("agent")->warn("could not write {}", record_file_.string());
}

v1::RunCompletion HostRun::stop(const std::string& reason) {
  // Asked to stop, the replay sends the ops it finished; a replay that does not answer in time
  // is killed and leaves none.
  if (replay_ && !exited_) {
    v1::ReplayCommand stop;
    stop.mutable_stop()->set_reason(reason);
    if (replay_->send(stop).ok()) {
      const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
      while (!exited_ && !completion_ && std::chrono::steady_clock::now() < deadline) {
        drain_events(std::chrono::milliseconds(50));
      }
    }
  }
  v1::RunCompletion c = completion_ ? *completion_ : v1::RunCompletion();
  replay_.reset();
  exited_ = true;
  c.clear_faults();
  c.set_run_index(request_.run_index());
  add_fault_counts(c);
  c.set_ok(false);
  c.set_stopped(true);
  c.set_failure(fmt::format("host {}: stopped: {}", request_.host(), reason));
  keep_record(c);
  return c;
}

}  // namespace collide::orchestrator::agent
