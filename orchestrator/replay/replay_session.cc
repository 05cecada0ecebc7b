#include "orchestrator/replay/replay_session.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/netns.h"
#include "orchestrator/replay/transport_options.h"
#include "orchestrator/testbed/testbed_plan.h"
#include "replayer/backend/port_factory.h"
#include "replayer/backend/tsc_clock.h"
#include "traces/op_types.h"
#include "traces/rank_programs.h"

namespace collide::orchestrator::replay {
namespace {

namespace coll = replayer::collectives;
namespace eng = replayer::engine;
namespace tp = replayer::transport;
namespace wire = replayer::wire;
using Clock = std::chrono::steady_clock;

// Defaults of the request's own (non-transport) fields.
constexpr const char* kRankIpBase = "198.18.1.0";
constexpr uint32_t kPaceBurst = 32;
constexpr double kDcqcnLineRateGbps = 100;
constexpr uint64_t kPcapMaxPackets = 100000;
constexpr double kTimeoutS = 600;
// How often a run without progress reports still looks for a stop request.
constexpr double kStopCheckEveryS = 0.2;
// Room in a port buffer beyond the RoCE payload: headers, RETH, ICRC.
constexpr uint32_t kFrameOverheadBytes = 128;

// Each rank's address, by the request's scheme.
Result<std::vector<uint32_t>> rank_addresses(const v1::ReplayRequest& r, const coll::Placement& pl,
                                             uint32_t world) {
  std::vector<uint32_t> ips(world);
  switch (r.addressing()) {
    case v1::ReplayRequest::ADDRESSING_TESTBED: {
      // The virtual testbed's scheme: each host NIC routes its own /27 of rank addresses.
      std::map<std::pair<uint32_t, uint32_t>, uint32_t> slots;
      for (uint32_t rank = 0; rank < world; ++rank) {
        const uint32_t host = pl.host_of_rank[rank], nic = pl.nic_of_rank[rank];
        ips[rank] = testbed::rank_address(host, nic, slots[{host, nic}]++);
      }
      return ips;
    }
    case v1::ReplayRequest::ADDRESSING_LIST: {
      std::map<uint32_t, uint32_t> listed;
      for (const v1::RankEndpoint& e : r.rank_endpoints()) {
        auto ip = wire::Ipv4Address::parse(e.ipv4());
        if (!ip.ok()) return ip.status().with_context(fmt::format("rank_endpoints: rank {}", e.rank()));
        listed[e.rank()] = ip->host_order;
      }
      for (uint32_t rank = 0; rank < world; ++rank) {
        auto it = listed.find(rank);
        if (it == listed.end()) return invalid_argument(fmt::format("rank_endpoints: no address for rank {}", rank));
        ips[rank] = it->second;
      }
      return ips;
    }
    default: {
      auto base = wire::Ipv4Address::parse(r.rank_ip_base().empty() ? kRankIpBase : r.rank_ip_base());
      if (!base.ok()) return base.status().with_context("rank_ip_base");
      for (uint32_t rank = 0; rank < world; ++rank) ips[rank] = base->host_order + rank;
      return ips;
    }
  }
}

Result<eng::RankAddressing> addressing_of(const v1::ReplayRequest& r, const coll::Placement& pl,
                                          uint32_t world) {
  std::optional<wire::MacAddress> next_hop;
  if (!r.next_hop_mac().empty()) {
    auto mac = wire::MacAddress::parse(r.next_hop_mac());
    if (!mac.ok()) return mac.status().with_context("next_hop_mac");
    next_hop = *mac;
  }
  std::map<uint32_t, wire::MacAddress> host_macs;
  for (const auto& [host, text] : r.host_macs()) {
    auto mac = wire::MacAddress::parse(text);
    if (!mac.ok()) return mac.status().with_context(fmt::format("host_macs: host {}", host));
    host_macs[host] = *mac;
  }
  if (!next_hop && host_macs.empty()) return invalid_argument("the request names no next-hop MAC and no host MACs");
  auto ips = rank_addresses(r, pl, world);
  if (!ips.ok()) return ips.status();
  eng::RankAddressing a;
  a.ip_of = [ips = std::move(ips).value()](uint32_t rank) { return wire::Ipv4Address{ips[rank]}; };
  a.next_hop_mac = [host_of = pl.host_of_rank, host_macs, next_hop](uint32_t rank) {
    auto it = host_macs.find(host_of[rank]);
    return it != host_macs.end() ? it->second : next_hop.value_or(wire::MacAddress{});
  };
  return a;
}

eng::EngineConfig engine_config(const v1::ReplayRequest& r, const TransportOptions& t) {
  eng::EngineConfig c;
  c.qp = t.qp;
  c.dcqcn = t.dcqcn;
  c.dcqcn.line_rate_gbps = r.dcqcn_line_rate_gbps() > 0 ? r.dcqcn_line_rate_gbps() : kDcqcnLineRateGbps;
  c.verify_payload = r.verify_payload();
  c.pace_gbps = r.pace_gbps();
  c.pace_burst = r.pace_burst() > 0 ? r.pace_burst() : kPaceBurst;
  c.honor_compute_gaps = r.trace_timing();
  using ns = std::chrono::nanoseconds;
  for (const v1::HookWindowSpec& w : r.drain_pauses()) {
    c.drain_pauses.push_back({ns(w.start_ns()), ns(w.duration_ns())});
  }
  for (const v1::HookWindowSpec& w : r.send_delays()) {
    c.send_delays.push_back({ns(w.start_ns()), ns(w.duration_ns()), ns(w.delay_ns())});
  }
  return c;
}

}  // namespace

Result<std::unique_ptr<ReplaySession>> ReplaySession::prepare(const v1::ReplayRequest& request) {
  if (request.ranks().empty()) return invalid_argument("the request names no ranks");
  if (request.ranks_per_host() == 0) return invalid_argument("ranks_per_host is 0");
  // Before any thread or socket exists, so all of them live in the namespace.
  if (!request.netns().empty()) COLLIDE_RETURN_IF_ERROR(netns::enter(request.netns()));
  auto transport = resolve_transport(request.transport());
  if (!transport.ok()) return transport.status();

  std::unique_ptr<ReplaySession> s(new ReplaySession());
  s->request_ = request;
  const std::set<uint32_t> local(request.ranks().begin(), request.ranks().end());
  auto programs = traces::read_rank_programs(request.trace_file(), local);
  if (!programs.ok()) return programs.status();
  s->header_ = programs->header;
  const uint32_t world = s->header_.world_size();
  auto placement = coll::Placement::uniform(
      world, request.ranks_per_host(),
      request.nics_per_host() == 0 ? request.ranks_per_host() : request.nics_per_host());
  if (!placement.ok()) return placement.status();
  auto addressing = addressing_of(request, *placement, world);
  if (!addressing.ok()) return addressing.status();

  auto port = replayer::backend::open_port(request.port(), static_cast<int>(request.lcore()),
                                           transport->qp.mtu + kFrameOverheadBytes,
                                           {request.eal_args().begin(), request.eal_args().end()});
  if (!port.ok()) return port.status();
  s->port_ = std::move(port).value();
  if (!request.pcap_file().empty()) {
    auto wrapped = replayer::backend::PcapCapturePort::open(
        std::move(s->port_), request.pcap_file(),
        request.pcap_max_packets() > 0 ? request.pcap_max_packets() : kPcapMaxPackets);
    if (!wrapped.ok()) return wrapped.status();
    s->capture_ = wrapped->get();
    s->port_ = std::move(wrapped).value();
  }

  const eng::EngineConfig config = engine_config(request, *transport);
  s->linger_quiet_ns_ = 2 * config.qp.timeout_ns();
  // The pacer asks the time for every frame: read it from the TSC (DPDK's rate when its EAL is
  // up, after the port opened it).
  const auto tsc = replayer::backend::TscClock::calibrate();
  auto engine = eng::Engine::create(config, s->header_, *placement, transport->expand,
                                    std::move(programs).value().ops, *addressing, *s->port_,
                                    [tsc] { return tsc.now(); });
  if (!engine.ok()) return engine.status();
  s->engine_ = std::move(engine).value();
  return s;
}

ReplaySession::~ReplaySession() {
  engine_.reset();  // it holds a reference to the port
  port_.reset();
}

v1::ReplayReady ReplaySession::ready() const {
  v1::ReplayReady r;
  r.set_mac(port_->mac().to_string());
  r.set_port(port_->describe());
  return r;
}

uint32_t ReplaySession::comm_size(const std::string& comm) const {
  for (const auto& c : header_.communicators()) {
    if (c.id() == comm) return static_cast<uint32_t>(c.ranks_size());
  }
  return 0;
}

namespace {

// Our ranks are done, but a peer may still be waiting for the ACK of its last packets: if that
// ACK was lost, its retransmission must find us answering (a NIC does not go away when its
// process's work is done). Keep polling until no frame has come for `quiet`, and no longer than
// ten times that: longer than a peer's whole retry budget.
void linger(eng::Engine& engine, replayer::backend::PacketPort& port, tp::Nanos quiet) {
  const auto quiet_for = std::chrono::nanoseconds(quiet);
  const auto give_up = Clock::now() + 10 * quiet_for;
  auto last_frame = Clock::now();
  uint64_t seen = engine.counters().rx_frames;
  while (Clock::now() - last_frame < quiet_for && Clock::now() < give_up) {
    engine.poll();
    if (const uint64_t now_seen = engine.counters().rx_frames; now_seen != seen) {
      seen = now_seen;
      last_frame = Clock::now();
    } else {
      port.wait_for_frames(std::chrono::microseconds(500));
    }
  }
}

}  // namespace

v1::RunProgress progress_of(const eng::Engine& engine, uint32_t run_index, double elapsed_s) {
  const eng::EngineCounters c = engine.counters();
  v1::RunProgress p;
  p.set_run_index(run_index);
  p.set_ops_done(engine.ops_recorded());
  p.set_packets_sent(c.requesters.packets_sent);
  p.set_retransmitted_packets(c.requesters.retransmitted_packets);
  p.set_elapsed_s(elapsed_s);
  return p;
}

SessionOutcome ReplaySession::run(const RunCallbacks& cb) {
  SessionOutcome out;
  const double timeout_s = request_.timeout_s() > 0 ? request_.timeout_s() : kTimeoutS;
  const bool report = request_.progress_every_s() > 0 && cb.on_progress;
  const double slice_s = report ? std::min(request_.progress_every_s(), kStopCheckEveryS) : kStopCheckEveryS;
  const auto slice = std::chrono::nanoseconds(static_cast<int64_t>(slice_s * 1e9));
  const auto report_every = std::chrono::nanoseconds(static_cast<int64_t>(request_.progress_every_s() * 1e9));
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::nanoseconds(static_cast<int64_t>(timeout_s * 1e9));
  auto next_report = started + report_every;
  while (true) {
    const auto left = deadline - Clock::now();
    Status s = engine_->run(std::min<std::chrono::nanoseconds>(slice, left));
    if (s.code() != StatusCode::kDeadlineExceeded || Clock::now() >= deadline) {
      out.status = s;
      break;
    }
    if (cb.should_stop && cb.should_stop()) {
      out.stopped = true;
      out.status = unavailable("stopped before the job ended");
      break;
    }
    if (report && Clock::now() >= next_report) {
      next_report += report_every;
      cb.on_progress(progress_of(*engine_, request_.run_index(),
                                 std::chrono::duration<double>(Clock::now() - started).count()));
    }
  }
  if (out.status.ok()) linger(*engine_, *port_, linger_quiet_ns_);
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  out.records = engine_->take_records();
  out.counters = engine_->counters();
  out.hook_windows = engine_->hook_windows();
  out.port_counters = port_->counters();
  out.port_description = port_->describe();
  if (capture_ != nullptr) {
    capture_->flush();
    out.pcap_captured = capture_->captured();
    out.pcap_not_captured = capture_->not_captured();
  }
  return out;
}

v1::RunCompletion completion_of(const SessionOutcome& o, uint32_t run_index) {
  v1::RunCompletion c;
  c.set_run_index(run_index);
  c.set_ok(o.status.ok());
  if (!o.status.ok()) c.set_failure(std::string(o.status.message()));
  c.set_stopped(o.stopped);
  for (const eng::OpRecord& r : o.records) {
    v1::OpCompletion* op = c.add_ops();
    op->set_rank(r.rank);
    op->set_op_index(r.op_index);
    op->set_kind(std::string(traces::op_kind_name(r.kind)));
    op->set_comm(r.comm);
    op->set_bytes(r.bytes);
    op->set_start_ns(r.start_ns);
    op->set_end_ns(r.end_ns);
    op->set_failed(r.failed);
  }
  c.set_packets_sent(o.counters.requesters.packets_sent);
  c.set_retransmitted_packets(o.counters.requesters.retransmitted_packets);
  c.set_timeouts(o.counters.requesters.timeouts);
  v1::ReplayCounters& k = *c.mutable_counters();
  k.set_tx_frames(o.counters.tx_frames);
  k.set_rx_frames(o.counters.rx_frames);
  k.set_icrc_errors(o.counters.icrc_errors);
  k.set_pattern_errors(o.counters.pattern_errors);
  k.set_packets_received(o.counters.responders.packets_received);
  k.set_payload_bytes_received(o.counters.responders.bytes_received);
  k.set_naks_received(o.counters.requesters.naks);
  k.set_duplicates(o.counters.responders.duplicates);
  k.set_out_of_order(o.counters.responders.out_of_order);
  k.set_ecn_marked(o.counters.responders.ecn_marked);
  k.set_cnps_received(o.counters.requesters.cnps);
  c.set_port(o.port_description);
  for (const eng::HookWindow& w : o.hook_windows) {
    v1::ReplayerFaultWindow* out = c.add_replayer_faults();
    out->set_send_delay(w.kind == eng::HookWindow::Kind::kSendDelay);
    out->set_index(w.index);
    out->set_start_ns(static_cast<uint64_t>(w.start_ns));
    out->set_end_ns(static_cast<uint64_t>(w.end_ns));
  }
  return c;
}

}  // namespace collide::orchestrator::replay
