#include "orchestrator/agent/host_run.h"

#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/netns.h"
#include "orchestrator/agent/next_hop.h"
#include "orchestrator/faults/fault_plan.h"
#include "orchestrator/testbed/testbed_plan.h"

namespace collide::orchestrator::agent {
namespace {

using namespace std::chrono_literals;

template <typename T>
T or_default(T value, T fallback) {
  return value ? value : fallback;
}

// How long the agent waits for ARP towards one peer before it gives up on the run.
constexpr auto kNeighborTimeout = 3s;
// How long a replay told to stop gets to write what it recorded.
constexpr auto kStopGrace = 3s;

// Real hosts: the next-hop MAC towards every peer host, asked of this host's own tables (inside
// the host's namespace when it has one), as `collide replay --host-mac` flags.
Result<std::vector<std::string>> peer_mac_flags(const v1::PrepareRun& r, const std::string& netns) {
  if (r.interface().empty()) return invalid_argument("the run names rank addresses but no interface");
  auto scope = netns.empty() ? Result<std::unique_ptr<netns::Scope>>(std::unique_ptr<netns::Scope>())
                             : netns::Scope::enter(netns);
  if (!scope.ok()) return scope.status();
  std::map<uint32_t, std::string> peer_ip;  // one address per peer host is enough: one next hop
  for (const v1::RankEndpoint& e : r.rank_endpoints()) {
    if (e.host() != r.host()) peer_ip.emplace(e.host(), e.ipv4());
  }
  std::vector<std::string> flags;
  for (const auto& [host, ip] : peer_ip) {
    auto mac = resolve_next_hop_mac(ip, r.interface(), kNeighborTimeout);
    if (!mac.ok()) return mac.status().with_context(fmt::format("host {}'s peer host {}", r.host(), host));
    flags.push_back(fmt::format("--host-mac={}={}", host, *mac));
  }
  return flags;
}

std::vector<std::string> replay_argv(const v1::PrepareRun& r, const HostRunDefaults& d,
                                     const std::string& trace, const std::string& results,
                                     const std::string& go, const std::vector<std::string>& peer_macs) {
  const v1::TransportSettings& t = r.transport();
  std::vector<std::string> argv = {
      // The replay must not outlive this agent, even if the agent is killed outright.
      "setpriv", "--pdeathsig", "KILL", "--", d.collide_binary, "--log-level=warn", "replay", trace,
      "--ranks=" + fmt::format("{}", fmt::join(r.ranks(), ",")), "--progress-every=0.5",
      "--ranks-per-host=" + std::to_string(r.ranks_per_host()),
      "--nics-per-host=" + std::to_string(or_default(r.nics_per_host(), 1u)),
      "--port=" + (r.port().empty() ? d.port_spec : r.port()),
      "--lcore=" + std::to_string(r.lcore()),
      "--mtu=" + std::to_string(or_default(t.mtu_bytes(), 1024u)),
      std::string("--recovery=") +
          (t.recovery() == v1::TransportSettings::RECOVERY_SELECTIVE_REPEAT ? "selective-repeat" : "go-back-n"),
      "--channels=" + std::to_string(or_default(t.channels(), 2u)),
      "--qps=" + std::to_string(or_default(t.qps_per_connection(), 1u)),
      "--slice-bytes=" + std::to_string(or_default<uint64_t>(t.slice_bytes(), 1 << 20)),
      "--timeout-exponent=" + std::to_string(or_default(t.timeout_exponent(), 14u)),
      "--retry-count=" + std::to_string(or_default(t.retry_count(), 7u)),
      std::string("--algorithm=") + (t.all_reduce() == v1::TransportSettings::ALL_REDUCE_TREE ? "tree" : "ring"),
      "--max-outstanding=256", "--results=" + results, "--wait-for-file=" + go,
      "--timeout=" + std::to_string(static_cast<int>(r.run_timeout_s() > 0 ? r.run_timeout_s() : 600))};
  const std::string netns = r.netns().empty() ? d.netns : r.netns();
  if (!netns.empty()) argv.push_back("--netns=" + netns);
  if (r.testbed().hosts() > 0) argv.push_back("--rank-addresses=testbed");
  if (r.rank_endpoints_size() > 0) {
    argv.push_back("--rank-addresses=list");
    for (const v1::RankEndpoint& e : r.rank_endpoints()) {
      argv.push_back(fmt::format("--rank-ip={}={}", e.rank(), e.ipv4()));
    }
    argv.insert(argv.end(), peer_macs.begin(), peer_macs.end());
  }
  if (!r.next_hop_mac().empty()) argv.push_back("--next-hop-mac=" + r.next_hop_mac());
  if (r.trace_timing()) argv.push_back("--timing=trace");
  // Slow receivers and send delays aimed at this host are the replayer's to play.
  std::vector<const v1::Fault*> host_faults;
  for (const v1::Fault& f : r.faults()) host_faults.push_back(&f);
  for (std::string& flag : orchestrator::faults::replayer_hook_flags(host_faults, r.host())) {
    argv.push_back(std::move(flag));
  }
  return argv;
}

}  // namespace

Result<std::unique_ptr<HostRun>> HostRun::prepare(const v1::PrepareRun& request,
                                                  const HostRunDefaults& defaults) {
  if (request.ranks().empty()) return invalid_argument("a run with no ranks for this host");
  if (request.port().empty() && defaults.port_spec.empty()) {
    return invalid_argument("the run names no packet port and the agent has none (--port-spec)");
  }
  std::unique_ptr<HostRun> run(new HostRun());
  run->request_ = request;
  std::filesystem::create_directories(defaults.work_dir);
  const std::string stem = fmt::format("run-{}-host-{}", request.run_index(), request.host());
  run->trace_file_ = defaults.work_dir / (stem + ".trace");
  run->results_file_ = defaults.work_dir / (stem + ".json");
  run->go_file_ = defaults.work_dir / (stem + ".go");
  std::filesystem::remove(run->results_file_);
  std::filesystem::remove(run->go_file_);
  {
    std::ofstream out(run->trace_file_, std::ios::binary | std::ios::trunc);
    out.write(request.trace().data(), static_cast<std::streamsize>(request.trace().size()));
    if (!out.good()) return unavailable(fmt::format("writing {}", run->trace_file_.string()));
  }

  const std::string netns = request.netns().empty() ? defaults.netns : request.netns();
  std::vector<std::string> peer_macs;
  if (request.rank_endpoints_size() > 0) {
    auto flags = peer_mac_flags(request, netns);
    if (!flags.ok()) return flags.status();
    peer_macs = std::move(flags).value();
  }

  if (request.faults_size() > 0 && request.testbed().hosts() == 0) {
    // A real host: its faults go on its own NIC.
    if (request.interface().empty()) return invalid_argument("faults on a real host need the run's interface");
    const std::vector<v1::Fault> faults(request.faults().begin(), request.faults().end());
    auto armed = arm_own_nic_faults(faults, netns, request.interface(), request.repetition());
    if (!armed.ok()) return armed.status();
    run->faults_ = std::move(armed).value();
  } else if (request.faults_size() > 0) {
    auto plan = testbed::plan_testbed(request.testbed());
    if (!plan.ok()) return plan.status();
    const std::vector<v1::Fault> faults(request.faults().begin(), request.faults().end());
    auto armed = arm_host_faults(faults, *plan, request.repetition());
    if (!armed.ok()) return armed.status();
    run->faults_ = std::move(armed).value();
  }

  auto child = process::ChildProcess::spawn(
      replay_argv(request, defaults, run->trace_file_.string(), run->results_file_.string(),
                  run->go_file_.string(), peer_macs));
  if (!child.ok()) return child.status();
  run->replay_.emplace(std::move(child).value());
  auto line = run->replay_->read_line(60s);
  if (!line.ok() || line->rfind("ready", 0) != 0) {
    return unavailable(fmt::format("the replay of host {} did not start: {}", request.host(),
                                   line.ok() ? *line : line.status().message()));
  }
  return run;
}

HostRun::~HostRun() {
  replay_.reset();  // kills it if it still runs
  faults_.reset();  // disarms
  std::error_code ec;
  std::filesystem::remove(go_file_, ec);
  std::filesystem::remove(trace_file_, ec);
}

Status HostRun::start() {
  std::ofstream(go_file_).close();
  if (!std::filesystem::exists(go_file_)) return unavailable("could not create " + go_file_.string());
  if (faults_) COLLIDE_RETURN_IF_ERROR(faults_->start());
  started_ = true;
  started_at_ = std::chrono::steady_clock::now();
  return {};
}

v1::RunProgress HostRun::poll_progress() {
  // Lines the replay printed since the last call; the newest "progress" one counts.
  while (replay_ && !exited_) {
    auto line = replay_->read_line(1ms);
    if (!line.ok()) break;
    std::istringstream in(*line);
    std::string word;
    uint64_t ops = 0, sent = 0, resent = 0, timeouts = 0;
    if (!(in >> word >> ops >> sent >> resent >> timeouts) || word != "progress") continue;
    progress_.set_ops_done(ops);
    progress_.set_packets_sent(sent);
    progress_.set_retransmitted_packets(resent);
  }
  progress_.set_run_index(run_index());
  progress_.set_elapsed_s(elapsed_s());
  return progress_;
}

double HostRun::elapsed_s() const {
  return started_ ? std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count() : 0;
}

bool HostRun::finished() {
  if (exited_) return true;
  if (!replay_) return true;
  // Has it exited? WNOWAIT leaves it to be reaped by wait(), which then returns at once.
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(replay_->pid()), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != replay_->pid()) {
    return false;
  }
  auto code = replay_->wait(10s);
  exit_code_ = code.ok() ? *code : -1;
  exited_ = true;
  return true;
}

void HostRun::add_fault_counts(v1::RunCompletion& c) const {
  if (!faults_) return;
  for (const FaultCounts& f : faults_->counts()) {
    v1::FaultCount* out = c.add_faults();
    out->set_name(f.name);
    out->set_kind(f.kind);
    out->set_packets_matched(f.packets_matched);
    out->set_packets_acted(f.packets_acted);
  }
}

v1::RunCompletion HostRun::completion() {
  v1::RunCompletion c;
  c.set_run_index(request_.run_index());
  add_fault_counts(c);
  std::ifstream in(results_file_);
  const bool readable = in.good();
  const auto j = readable ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  if (!readable || j.is_discarded() || !j.is_object()) {
    c.set_ok(false);
    c.set_failure(fmt::format("host {}: the replay left no results (exit code {})",
                              request_.host(), exit_code_));
    return c;
  }
  c.set_ok(j.value("ok", false));
  if (!c.ok()) c.set_failure(j.value("failure", std::string("failed")));
  for (const auto& op : j.value("ops", nlohmann::json::array())) {
    v1::OpCompletion* o = c.add_ops();
    o->set_rank(op.value("rank", 0u));
    o->set_op_index(op.value("op_index", uint64_t{0}));
    o->set_kind(op.value("kind", std::string()));
    o->set_comm(op.value("comm", std::string()));
    o->set_bytes(op.value("bytes", uint64_t{0}));
    o->set_start_ns(op.value("start_ns", uint64_t{0}));
    o->set_end_ns(op.value("end_ns", uint64_t{0}));
    o->set_failed(op.value("failed", false));
  }
  const auto counters = j.value("counters", nlohmann::json::object());
  c.set_packets_sent(counters.value("packets_sent", uint64_t{0}));
  c.set_retransmitted_packets(counters.value("retransmitted_packets", uint64_t{0}));
  c.set_timeouts(counters.value("timeouts", uint64_t{0}));
  return c;
}

v1::RunCompletion HostRun::stop(const std::string& reason) {
  // Asked to stop, the replay writes the ops it finished; a replay that was never let go, or
  // does not stop in time, is killed and leaves none.
  v1::RunCompletion c;
  if (replay_ && !exited_ && started_ && ::kill(replay_->pid(), SIGTERM) == 0) {
    auto code = replay_->wait(kStopGrace);
    if (code.ok()) {
      exit_code_ = *code;
      exited_ = true;
      c = completion();
    }
  }
  replay_.reset();
  exited_ = true;
  c.clear_faults();
  c.set_run_index(request_.run_index());
  add_fault_counts(c);
  c.set_ok(false);
  c.set_stopped(true);
  c.set_failure(fmt::format("host {}: stopped: {}", request_.host(), reason));
  return c;
}

}  // namespace collide::orchestrator::agent
