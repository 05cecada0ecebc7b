#include "orchestrator/replay/replay_session.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/netns.h"
#include "orchestrator/replay/lossless_request.h"
#include "orchestrator/replay/transport_options.h"
#include "orchestrator/testbed/testbed_plan.h"
#include "replayer/backend/engine_thread.h"
#include "replayer/backend/port_factory.h"
#include "replayer/backend/tsc_clock.h"
#include "traces/op_types.h"
#include "traces/rank_programs.h"

namespace collide::orchestrator::replay {
namespace {

namespace coll = replayer::collectives;
namespace eng = replayer::engine;
namespace wire = replayer::wire;
using Clock = std::chrono::steady_clock;

// Defaults of the request's own (non-transport) fields.
constexpr const char* kRankIpBase = "198.18.1.0";
constexpr uint32_t kPaceBurst = 32;
constexpr double kDcqcnLineRateGbps = replayer::transport::kDcqcnReferenceGbps;
constexpr uint64_t kPcapMaxPackets = 100000;
constexpr double kTimeoutS = 600;
// How often a run looks for a stop request (a poll of its command channel; cheap): a stopped
// run hands back its records up to this much later.
constexpr double kStopCheckEveryS = 0.02;
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

// How NIC `n`'s frames reach each peer rank: to the MAC its NIC names for that rank, else to its
// next hop. Rank addresses are the same for every NIC.
Result<std::vector<eng::RankAddressing>> addressing_of(const v1::ReplayRequest& r,
                                                       const coll::Placement& pl, uint32_t world) {
  auto ips = rank_addresses(r, pl, world);
  if (!ips.ok()) return ips.status();
  auto ip_of = [ips = std::move(ips).value()](uint32_t rank) { return wire::Ipv4Address{ips[rank]}; };
  std::vector<eng::RankAddressing> out;
  for (int n = 0; n < r.nics_size(); ++n) {
    const v1::ReplayNic& nic = r.nics(n);
    const std::string where = fmt::format("nics[{}]", n);
    std::optional<wire::MacAddress> next_hop;
    if (!nic.next_hop_mac().empty()) {
      auto mac = wire::MacAddress::parse(nic.next_hop_mac());
      if (!mac.ok()) return mac.status().with_context(where + ".next_hop_mac");
      next_hop = *mac;
    }
    std::unordered_map<uint32_t, wire::MacAddress> peer_macs;
    for (const auto& [rank, text] : nic.peer_macs()) {
      auto mac = wire::MacAddress::parse(text);
      if (!mac.ok()) return mac.status().with_context(fmt::format("{}.peer_macs: rank {}", where, rank));
      peer_macs[rank] = *mac;
    }
    if (!next_hop && peer_macs.empty()) {
      return invalid_argument(where + " names no next-hop MAC and no peer MACs");
    }
    eng::RankAddressing a;
    a.ip_of = ip_of;
    a.next_hop_mac = [peer_macs = std::move(peer_macs), next_hop](uint32_t rank) {
      auto it = peer_macs.find(rank);
      return it != peer_macs.end() ? it->second : next_hop.value_or(wire::MacAddress{});
    };
    out.push_back(std::move(a));
  }
  return out;
}

eng::EngineConfig engine_config(const v1::ReplayRequest& r, const TransportOptions& t) {
  eng::EngineConfig c;
  c.qp = t.qp;
  c.dscp = t.dscp;
  c.dcqcn = replayer::transport::scaled_to_line_rate(
      t.dcqcn, r.dcqcn_line_rate_gbps() > 0 ? r.dcqcn_line_rate_gbps() : kDcqcnLineRateGbps);
  c.verify_payload = r.verify_payload();
  c.pace_gbps = r.pace_gbps();
  // A pause quantum is 512 bit times at the link's speed: the shaped rate where there is one.
  c.pfc.line_gbps = r.pace_gbps() > 0 ? r.pace_gbps()
                    : r.dcqcn_line_rate_gbps() > 0 ? r.dcqcn_line_rate_gbps()
                                                   : kDcqcnLineRateGbps;
  c.lossless = lossless_config(r);
  c.drain_buffer_frames = r.drain_buffer_frames();
  c.pace_burst = r.pace_burst() > 0 ? r.pace_burst() : kPaceBurst;
  c.honor_compute_gaps = r.trace_timing();
  c.entropy_seed = r.entropy_seed();
  c.steer_lanes = r.queues_per_nic() > 1;
  using ns = std::chrono::nanoseconds;
  const auto nic_of = [](const v1::HookWindowSpec& w) {
    return w.has_nic() ? std::optional<uint32_t>(w.nic()) : std::nullopt;
  };
  for (const v1::HookWindowSpec& w : r.drain_pauses()) {
    c.drain_pauses.push_back({ns(w.start_ns()), ns(w.duration_ns()), nic_of(w)});
  }
  for (const v1::HookWindowSpec& w : r.send_delays()) {
    c.send_delays.push_back({ns(w.start_ns()), ns(w.duration_ns()), ns(w.delay_ns()), nic_of(w)});
  }
  return c;
}

}  // namespace

std::string pcap_file_of_nic(const std::string& file, uint32_t nic, size_t nics) {
  if (nics <= 1) return file;
  const std::filesystem::path path(file);
  return (path.parent_path() / fmt::format("{}.nic{}{}", path.stem().string(), nic,
                                           path.extension().string())).string();
}

Result<std::unique_ptr<ReplaySession>> ReplaySession::prepare(const v1::ReplayRequest& request) {
  if (request.ranks().empty()) return invalid_argument("the request names no ranks");
  if (request.ranks_per_host() == 0) return invalid_argument("ranks_per_host is 0");
  if (request.nics().empty()) return invalid_argument("the request names no NIC (nics)");
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
  const auto nic_count = static_cast<uint32_t>(request.nics_size());
  auto placement = coll::Placement::uniform(world, request.ranks_per_host(), nic_count);
  if (!placement.ok()) return placement.status();
  placement->leaf_of_host.assign(request.leaf_of_host().begin(), request.leaf_of_host().end());
  auto addressing = addressing_of(request, *placement, world);
  if (!addressing.ok()) return addressing.status();

  // All at once: the DPDK EAL starts once per process, with every NIC's device.
  replayer::backend::PortOptions port_options;
  port_options.lcore = static_cast<int>(request.lcore());
  port_options.max_frame_bytes = transport->qp.mtu + kFrameOverheadBytes;
  *port_options.dpdk.mutable_eal_args() = request.eal_args();
  const uint32_t queues = std::max<uint32_t>(1, request.queues_per_nic());
  if (queues > 1 && !request.pcap_file().empty()) {
    return invalid_argument("a capture (pcap_file) records one queue per NIC: not with queues_per_nic " +
                            std::to_string(queues));
  }
  port_options.dpdk.set_queues(queues);
  port_options.dpdk.set_queue_steering(request.queue_steering());
  port_options.dpdk.set_rx_ring_size(request.rx_ring_frames());  // 0: the replay default
  // Lossless: the NICs' own PFC too, where their drivers have it (a real NIC's buffer fills long
  // before the replay's receive side could tell).
  if (request.has_lossless()) {
    port_options.dpdk.mutable_nic_pfc()->set_priority(request.lossless().priority());
    port_options.dpdk.mutable_nic_pfc()->set_pause_quanta(request.lossless().quanta());
  }
  std::vector<std::string> specs;
  for (const v1::ReplayNic& nic : request.nics()) specs.push_back(nic.port());
  auto opened = replayer::backend::open_ports(specs, port_options);
  if (!opened.ok()) return opened.status();
  std::vector<replayer::backend::PacketPort*> ports;
  for (uint32_t n = 0; n < nic_count; ++n) {
    Nic nic;
    nic.port = std::move((*opened)[n]);
    if (!request.pcap_file().empty()) {
      nic.pcap_file = pcap_file_of_nic(request.pcap_file(), n, nic_count);
      auto wrapped = replayer::backend::PcapCapturePort::open(
          std::move(nic.port), nic.pcap_file,
          request.pcap_max_packets() > 0 ? request.pcap_max_packets() : kPcapMaxPackets);
      if (!wrapped.ok()) return wrapped.status();
      nic.capture = wrapped->get();
      nic.port = std::move(wrapped).value();
    }
    if (nic.port->queue_count() != queues) {
      return invalid_argument(fmt::format(
          "NIC {} ({}) has {} queue(s), {} asked: queues per NIC need DPDK ports", n,
          nic.port->describe(), nic.port->queue_count(), queues));
    }
    ports.push_back(nic.port.get());
    s->nics_.push_back(std::move(nic));
  }

  const eng::EngineConfig config = engine_config(request, *transport);
  s->linger_quiet_ns_ = 2 * config.qp.timeout_ns();
  // The pacer asks the time for every frame: read it from the TSC (DPDK's rate when its EAL is
  // up, after the ports opened it).
  const auto tsc = replayer::backend::TscClock::calibrate();
  auto engines = eng::HostEngines::create(config, s->header_, *placement, transport->expand,
                                          std::move(programs).value().ops, *addressing, ports,
                                          [tsc] { return tsc.now(); });
  if (!engines.ok()) return engines.status();
  s->engines_ = std::move(engines).value();
  return s;
}

ReplaySession::~ReplaySession() {
  engines_.reset();  // they hold references to the ports
  nics_.clear();
}

v1::ReplayReady ReplaySession::ready() const {
  v1::ReplayReady r;
  std::vector<std::string> described;
  for (const Nic& nic : nics_) {
    r.add_macs(nic.port->mac().to_string());
    described.push_back(nic.port->describe());
  }
  r.set_mac(r.macs(0));
  r.set_port(fmt::format("{}", fmt::join(described, "; ")));
  return r;
}

uint32_t ReplaySession::comm_size(const std::string& comm) const {
  for (const auto& c : header_.communicators()) {
    if (c.id() == comm) return static_cast<uint32_t>(c.ranks_size());
  }
  return 0;
}

v1::RunProgress progress_of(const eng::HostProgress& progress, uint32_t run_index, double elapsed_s) {
  v1::RunProgress p;
  p.set_run_index(run_index);
  p.set_ops_done(progress.ops_recorded);
  p.set_packets_sent(progress.counters.requesters.packets_sent);
  p.set_retransmitted_packets(progress.counters.requesters.retransmitted_packets);
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
  auto next_report = started + report_every;

  std::atomic<bool> stop{false};
  eng::HostRunControl control;
  control.stop = &stop;
  control.linger_quiet = std::chrono::nanoseconds(linger_quiet_ns_);
  control.on_engine_thread = replayer::backend::register_engine_thread;
  control.on_engine_thread_end = replayer::backend::unregister_engine_thread;
  // One core per engine: a NIC's queue 0 on its core, its other queues on its queue_cores.
  for (size_t i = 0; i < engines_->engine_count(); ++i) {
    const v1::ReplayNic& nic = request_.nics(static_cast<int>(engines_->nic_of_engine(i)));
    const uint32_t lane = engines_->lane_of_engine(i);
    int core = -1;
    if (lane == 0 && nic.has_core()) core = static_cast<int>(nic.core());
    if (lane > 0 && static_cast<int>(lane) <= nic.queue_cores_size()) {
      core = static_cast<int>(nic.queue_cores(static_cast<int>(lane) - 1));
    }
    control.cores.push_back(core);
  }
  // The engines run (and linger) on their own threads; this one passes on stops and progress.
  std::promise<Status> finished;
  std::future<Status> result = finished.get_future();
  std::thread runner([&] {
    finished.set_value(engines_->run(std::chrono::nanoseconds(static_cast<int64_t>(timeout_s * 1e9)), control));
  });
  while (result.wait_for(slice) != std::future_status::ready) {
    if (!out.stopped && cb.should_stop && cb.should_stop()) {
      out.stopped = true;
      stop.store(true);
    }
    if (report && Clock::now() >= next_report) {
      next_report += report_every;
      cb.on_progress(progress_of(engines_->progress(), request_.run_index(),
                                 std::chrono::duration<double>(Clock::now() - started).count()));
    }
  }
  runner.join();
  out.status = result.get();
  // A stop that came while the engines only lingered found the job complete.
  if (out.stopped && out.status.ok()) out.stopped = false;
  if (out.stopped) out.status = unavailable("stopped before the job ended");
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  out.records = engines_->take_records();
  out.counters = engines_->counters();
  out.hook_windows = engines_->hook_windows();
  for (const uint32_t n : engines_->nics()) {
    NicOutcome nic;
    nic.nic = n;
    nic.counters = engines_->counters_of_nic(n);
    nic.queues = static_cast<uint32_t>(nics_[n].port->queue_count());
    if (nic.queues > 1) nic.lanes = engines_->counters_of_lanes(n);
    Nic& own = nics_[n];
    nic.port_counters = own.port->counters();
    nic.port_description = own.port->describe();
    nic.pcap_file = own.pcap_file;
    if (own.capture != nullptr) {
      own.capture->flush();
      nic.pcap_captured = own.capture->captured();
      nic.pcap_not_captured = own.capture->not_captured();
    }
    out.nics.push_back(std::move(nic));
  }
  return out;
}

std::string SessionOutcome::ports_described() const {
  std::vector<std::string> ports;
  for (const NicOutcome& n : nics) ports.push_back(n.port_description);
  return fmt::format("{}", fmt::join(ports, "; "));
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
  for (const NicOutcome& n : o.nics) {
    v1::NicTraffic* out = c.add_nics();
    out->set_nic(n.nic);
    out->set_port(n.port_description);
    out->set_tx_frames(n.counters.tx_frames);
    out->set_tx_bytes(n.counters.tx_bytes);
    out->set_rx_frames(n.counters.rx_frames);
    out->set_packets_sent(n.counters.requesters.packets_sent);
    out->set_retransmitted_packets(n.counters.requesters.retransmitted_packets);
    out->set_payload_bytes_received(n.counters.responders.bytes_received);
    out->set_packets_received(n.counters.responders.packets_received);
    out->set_out_of_order_packets(n.counters.responders.out_of_order);
    out->set_ecn_marked_packets(n.counters.responders.ecn_marked);
    out->set_cnps_sent(n.counters.responders.cnps_sent);
    out->set_cnps_received(n.counters.requesters.cnps);
    out->set_pause_frames(n.counters.pause_frames);
    out->set_paused_ns(n.counters.paused_ns);
    out->set_pause_frames_sent(n.counters.pause_frames_sent);
    out->set_timeouts(n.counters.requesters.timeouts);
    out->set_naks_received(n.counters.requesters.naks);
    out->set_duplicates_received(n.counters.responders.duplicates);
    out->set_port_rx_dropped(n.port_counters.rx_dropped);
    out->set_rx_buffer_dropped(n.counters.rx_buffer_dropped);
    out->set_queues(n.queues);
    out->set_rx_wrong_lane(n.counters.rx_wrong_lane);
  }
  c.set_port(o.ports_described());
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
