// `collide replay`: replays the ranks one host holds, from a trace, over its packet ports (one per
// NIC), so that a person can drive a two-host test by hand. Its flags become a ReplayRequest, played by the same
// ReplaySession an agent's replay child (`collide replay-child`, hidden) runs.
#include <charconv>
#include <chrono>
#include <csignal>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/units.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/replay/lossless_request.h"
#include "orchestrator/replay/replay_child.h"
#include "orchestrator/replay/replay_session.h"
#include "orchestrator/replay/transport_options.h"
#include "replayer/collectives/accounting.h"
#include "traces/op_types.h"

namespace collide::cli {
namespace replay = orchestrator::replay;
namespace {

namespace coll = replayer::collectives;
namespace eng = replayer::engine;
using replay::TransportDefaults;

// The flags as given; what is left at 0 or empty takes the ReplayRequest's default.
struct ReplayOptions {
  v1::ReplayRequest request;
  std::vector<uint32_t> ranks;
  std::vector<std::string> ports;  // one per NIC, rail order
  std::vector<int> engine_cores;   // one per engine (NIC by NIC, its queues in order), or none
  uint32_t queues_per_nic = 1;
  std::string queue_steering = "flow-rules";
  std::string next_hop_mac;
  uint32_t lcore = 0;
  std::string rank_addresses = "base";
  std::vector<std::string> host_macs;  // HOST=MAC
  std::vector<std::string> rank_ips;   // RANK=IPV4, with rank_addresses "list"
  std::string recovery = "go-back-n";
  std::string algorithm = "ring";
  uint32_t mtu = 0, ack_every = 0, max_outstanding = 0, timeout_exponent = 0, retry_count = 0;
  uint32_t channels = 0, qps = 0;
  double timeout_scale = 0;
  std::optional<uint32_t> dscp;
  std::string slice;  // "512KiB", "1MB", "65536"
  bool dcqcn = false;
  bool lossless = false;
  bool no_pxn = false;
  bool no_verify = false;
  std::string timing = "fast";
  std::string results;
  std::string wait_for_file;
  std::vector<std::string> drain_pauses;  // START:DURATION
  std::vector<std::string> send_delays;   // START:DURATION:DELAY
};

// "START:DURATION[:DELAY]" with durations of common/units.h ("2s", "150ms", "40us";
// a zero duration lasts to the end of the replay).
v1::HookWindowSpec parse_hook(const std::string& flag, const std::string& text, size_t fields) {
  std::vector<uint64_t> out;
  size_t from = 0;
  for (size_t i = 0; i < fields; ++i) {
    const size_t colon = i + 1 < fields ? text.find(':', from) : std::string::npos;
    const std::string part = text.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    auto d = units::parse_duration(part);
    if (part.empty() || !d.ok() || (i + 1 < fields && colon == std::string::npos)) {
      fail("replay", kExitUsage,
           fmt::format("{} wants {}, got '{}'", flag,
                       fields == 2 ? "START:DURATION" : "START:DURATION:DELAY", text));
    }
    out.push_back(static_cast<uint64_t>(d->count()));
    from = colon + 1;
  }
  v1::HookWindowSpec w;
  w.set_start_ns(out[0]);
  w.set_duration_ns(out[1]);
  if (fields > 2) w.set_delay_ns(out[2]);
  return w;
}

// "N=VALUE": N a rank or host number, checked whole; the value is the caller's to check.
std::pair<uint32_t, std::string> parse_numbered(const std::string& flag, const std::string& want,
                                                const std::string& spec) {
  const auto eq = spec.find('=');
  uint32_t n = 0;
  const char* end = spec.data() + (eq == std::string::npos ? 0 : eq);
  const auto [ptr, ec] = std::from_chars(spec.data(), end, n);
  if (eq == std::string::npos || eq == 0 || ec != std::errc() || ptr != end) {
    fail("replay", kExitUsage, fmt::format("{} wants {}, got '{}'", flag, want, spec));
  }
  return {n, spec.substr(eq + 1)};
}

v1::ReplayRequest request_of(const ReplayOptions& opt) {
  v1::ReplayRequest r = opt.request;
  *r.mutable_ranks() = {opt.ranks.begin(), opt.ranks.end()};
  r.set_lcore(opt.lcore);
  if (opt.rank_addresses == "testbed") r.set_addressing(v1::ReplayRequest::ADDRESSING_TESTBED);
  if (opt.rank_addresses == "list") r.set_addressing(v1::ReplayRequest::ADDRESSING_LIST);
  for (const std::string& spec : opt.rank_ips) {
    auto [rank, ip] = parse_numbered("--rank-ip", "RANK=IPV4", spec);
    v1::RankEndpoint* e = r.add_rank_endpoints();
    e->set_rank(rank);
    e->set_ipv4(ip);
  }
  const size_t engines = opt.ports.size() * opt.queues_per_nic;
  if (!opt.engine_cores.empty() && opt.engine_cores.size() != engines) {
    fail("replay", kExitUsage,
         fmt::format("--engine-cores names {} cores for {} engines ({} ports x {} queues)",
                     opt.engine_cores.size(), engines, opt.ports.size(), opt.queues_per_nic));
  }
  r.set_queues_per_nic(opt.queues_per_nic);
  r.set_queue_steering(opt.queue_steering == "none" ? v1::DpdkPortConfig::QUEUE_STEERING_NONE
                                                    : v1::DpdkPortConfig::QUEUE_STEERING_FLOW_RULES);
  for (size_t n = 0; n < opt.ports.size(); ++n) {
    v1::ReplayNic* nic = r.add_nics();
    nic->set_port(opt.ports[n]);
    nic->set_next_hop_mac(opt.next_hop_mac);
    if (!opt.engine_cores.empty()) {
      const size_t first = n * opt.queues_per_nic;
      nic->set_core(static_cast<uint32_t>(opt.engine_cores[first]));
      for (size_t q = 1; q < opt.queues_per_nic; ++q) {
        nic->add_queue_cores(static_cast<uint32_t>(opt.engine_cores[first + q]));
      }
    }
    // A host's ranks are consecutive: its MAC is the next hop towards each of them, on every NIC.
    for (const std::string& spec : opt.host_macs) {
      auto [host, mac] = parse_numbered("--host-mac", "HOST=MAC", spec);
      for (uint32_t rank = host * r.ranks_per_host(); rank < (host + 1) * r.ranks_per_host(); ++rank) {
        (*nic->mutable_peer_macs())[rank] = mac;
      }
    }
  }
  v1::TransportSettings& t = *r.mutable_transport();
  t.set_mtu_bytes(opt.mtu);
  t.set_recovery(opt.recovery == "selective-repeat" ? v1::TransportSettings::RECOVERY_SELECTIVE_REPEAT
                 : opt.recovery == "out-of-order"   ? v1::TransportSettings::RECOVERY_OUT_OF_ORDER
                                                    : v1::TransportSettings::RECOVERY_GO_BACK_N);
  t.set_ack_every(opt.ack_every);
  t.set_max_outstanding(opt.max_outstanding);
  t.set_timeout_exponent(opt.timeout_exponent);
  t.set_timeout_scale(opt.timeout_scale);
  t.set_retry_count(opt.retry_count);
  t.set_channels(opt.channels);
  t.set_qps_per_connection(opt.qps);
  if (!opt.slice.empty()) {
    auto slice = units::parse_bytes(opt.slice);
    if (!slice.ok()) fail("replay", kExitUsage, "--slice-bytes: " + slice.status().message());
    t.set_slice_bytes(*slice);
  }
  t.set_all_reduce(opt.algorithm == "tree" ? v1::TransportSettings::ALL_REDUCE_TREE
                                           : v1::TransportSettings::ALL_REDUCE_RING);
  t.set_dcqcn(opt.dcqcn);
  t.set_pxn_disable(opt.no_pxn);
  if (opt.dscp) t.set_dscp(*opt.dscp);
  if (opt.lossless) {
    *r.mutable_lossless() = replay::lossless_receive(orchestrator::testbed::ResolvedPfc{});
  }
  r.set_verify_payload(!opt.no_verify);
  r.set_trace_timing(opt.timing == "trace");
  for (const std::string& text : opt.drain_pauses) *r.add_drain_pauses() = parse_hook("--drain-pause", text, 2);
  for (const std::string& text : opt.send_delays) *r.add_send_delays() = parse_hook("--send-delay", text, 3);
  return r;
}

const char* hook_kind_name(eng::HookWindow::Kind kind) {
  return kind == eng::HookWindow::Kind::kDrainPause ? "drain_pause" : "send_delay";
}

nlohmann::json op_json(const eng::OpRecord& r, uint32_t comm_size) {
  const double seconds = static_cast<double>(r.end_ns - r.start_ns) / 1e9;
  const double size = static_cast<double>(coll::nccl_tests_size(r.kind, comm_size, r.bytes));
  const double algbw = seconds > 0 ? size / seconds / 1e9 : 0;
  return {{"rank", r.rank},
          {"op_index", r.op_index},
          {"kind", std::string(traces::op_kind_name(r.kind))},
          {"comm", r.comm},
          {"bytes", r.bytes},
          {"network_bytes", r.network_bytes},
          {"start_ns", r.start_ns},
          {"end_ns", r.end_ns},
          {"time_us", seconds * 1e6},
          {"algbw_GBps", algbw},
          {"busbw_GBps", algbw * coll::busbw_factor(r.kind, comm_size)},
          {"failed", r.failed},
          {"failure", r.failure}};
}

nlohmann::json counters_json(const eng::EngineCounters& c) {
  return {{"rx_frames", c.rx_frames},
          {"rx_foreign", c.rx_foreign},
          {"rx_wrong_lane", c.rx_wrong_lane},
          {"icrc_errors", c.icrc_errors},
          {"pattern_errors", c.pattern_errors},
          {"tx_frames", c.tx_frames},
          {"tx_bytes", c.tx_bytes},
          {"packets_sent", c.requesters.packets_sent},
          {"retransmitted_packets", c.requesters.retransmitted_packets},
          {"naks_received", c.requesters.naks},
          {"timeouts", c.requesters.timeouts},
          {"cnps_received", c.requesters.cnps},
          {"pause_frames", c.pause_frames},
          {"paused_ns", c.paused_ns},
          {"pause_frames_sent", c.pause_frames_sent},
          {"rx_held_frames", c.rx_held_frames},
          {"rx_buffer_dropped", c.rx_buffer_dropped},
          {"packets_received", c.responders.packets_received},
          {"payload_bytes_received", c.responders.bytes_received},
          {"duplicates", c.responders.duplicates},
          {"out_of_order", c.responders.out_of_order},
          {"naks_sent", c.responders.naks_sent},
          {"cnps_sent", c.responders.cnps_sent},
          {"ecn_marked", c.responders.ecn_marked},
          {"rx_paused_polls", c.rx_paused_polls},
          {"tx_delayed_frames", c.tx_delayed_frames}};
}

// The results JSON of a by-hand replay: every record and counter the session kept.
nlohmann::json results_json(const replay::ReplaySession& session, const replay::SessionOutcome& o) {
  const v1::ReplayRequest& r = session.request();
  nlohmann::json out;
  out["trace"] = r.trace_file();
  out["port"] = o.ports_described();
  out["ranks"] = std::vector<uint32_t>(r.ranks().begin(), r.ranks().end());
  out["wall_seconds"] = o.wall_seconds;
  nlohmann::json ops = nlohmann::json::array();
  for (const eng::OpRecord& rec : o.records) ops.push_back(op_json(rec, session.comm_size(rec.comm)));
  out["ops"] = std::move(ops);
  out["counters"] = counters_json(o.counters);
  nlohmann::json hooks = nlohmann::json::array();
  for (const eng::HookWindow& w : o.hook_windows) {
    hooks.push_back({{"kind", hook_kind_name(w.kind)}, {"start_ns", w.start_ns}, {"end_ns", w.end_ns}});
  }
  out["hooks"] = std::move(hooks);
  // Summed over the NICs here; each NIC's own below.
  replayer::backend::PortCounters pc;
  uint64_t captured = 0, not_captured = 0;
  nlohmann::json nics = nlohmann::json::array();
  for (const replay::NicOutcome& n : o.nics) {
    pc.tx_frames += n.port_counters.tx_frames;
    pc.rx_frames += n.port_counters.rx_frames;
    pc.rx_dropped += n.port_counters.rx_dropped;
    pc.tx_errors += n.port_counters.tx_errors;
    captured += n.pcap_captured;
    not_captured += n.pcap_not_captured;
    nlohmann::json nic = {{"nic", n.nic}, {"port", n.port_description}, {"queues", n.queues},
                          {"counters", counters_json(n.counters)},
                          {"port_counters", {{"tx_frames", n.port_counters.tx_frames},
                                             {"rx_frames", n.port_counters.rx_frames},
                                             {"rx_dropped", n.port_counters.rx_dropped},
                                             {"tx_errors", n.port_counters.tx_errors}}}};
    if (!n.lanes.empty()) {
      nic["lanes"] = nlohmann::json::array();
      for (const eng::EngineCounters& lane : n.lanes) nic["lanes"].push_back(counters_json(lane));
    }
    if (!n.pcap_file.empty()) {
      nic["pcap"] = {{"file", n.pcap_file}, {"captured", n.pcap_captured}, {"not_captured", n.pcap_not_captured}};
    }
    nics.push_back(std::move(nic));
  }
  out["nics"] = std::move(nics);
  out["port_counters"] = {{"tx_frames", pc.tx_frames}, {"rx_frames", pc.rx_frames},
                          {"rx_dropped", pc.rx_dropped}, {"tx_errors", pc.tx_errors}};
  if (!r.pcap_file().empty()) {
    out["pcap"] = {{"file", r.pcap_file()}, {"captured", captured}, {"not_captured", not_captured}};
  }
  out["stopped"] = o.stopped;
  out["ok"] = o.status.ok();
  out["failure"] = o.status.ok() ? "" : o.status.message();
  return out;
}

// Set by SIGTERM or SIGINT: the replay stops between slices and still writes what it recorded.
std::atomic<bool> g_stop_requested{false};
void on_stop_signal(int) { g_stop_requested.store(true); }

void run_replay(const ReplayOptions& opt) {
  auto session = replay::ReplaySession::prepare(request_of(opt));
  if (!session.ok()) fail("replay", kExitUsage, session.status().message());
  // "ready" and every NIC's MAC, in rail order: whoever starts hosts by hand addresses them so.
  std::cout << fmt::format("ready {}", fmt::join((*session)->ready().macs(), " ")) << std::endl;
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
  if (!opt.wait_for_file.empty()) {
    // Several hosts start together: each waits until whoever runs them says go.
    while (!std::filesystem::exists(opt.wait_for_file) && !g_stop_requested.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  replay::RunCallbacks callbacks;
  callbacks.on_progress = [](const v1::RunProgress& p) {
    std::cout << fmt::format("progress {} {} {}", p.ops_done(), p.packets_sent(), p.retransmitted_packets())
              << std::endl;
  };
  callbacks.should_stop = [] { return g_stop_requested.load(); };
  const replay::SessionOutcome o = (*session)->run(callbacks);
  const nlohmann::json out = results_json(**session, o);
  if (!opt.results.empty()) {
    std::ofstream(opt.results) << out.dump(2) << "\n";
  } else {
    std::cout << out.dump(2) << "\n";
  }
  const auto& c = o.counters;
  std::cerr << fmt::format("collide replay: {} ops of ranks [{}] in {:.3f} s; {} packets sent, {} "
                           "retransmitted, {} timeouts; {} B received, {} ICRC and {} payload "
                           "errors\n",
                           o.records.size(), fmt::join(opt.ranks, ","), o.wall_seconds,
                           c.requesters.packets_sent, c.requesters.retransmitted_packets,
                           c.requesters.timeouts, c.responders.bytes_received, c.icrc_errors,
                           c.pattern_errors);
  if (!o.status.ok()) fail("replay", kExitFailed, o.status.message());
}

std::string default_text(uint64_t value) { return fmt::format(" (0: {})", value); }

}  // namespace

void add_replay_command(CLI::App& app) {
  using D = TransportDefaults;
  auto opt = std::make_shared<ReplayOptions>();
  v1::ReplayRequest& r = opt->request;
  r.set_ranks_per_host(8);
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay the ranks of one host from a trace as RoCEv2 over one port (an agent's "
                "data plane)");
  cmd->add_option("trace", *r.mutable_trace_file(), "collide trace file")->required();
  cmd->add_option("--ranks", opt->ranks, "global ranks this host runs (e.g. 0,1)")
      ->required()->delimiter(',');
  cmd->add_option_function<uint32_t>("--ranks-per-host", [&r](uint32_t n) { r.set_ranks_per_host(n); },
                                     "placement: consecutive ranks per host (default 8)");
  cmd->add_option("--port", opt->ports,
                  "a NIC's port: dpdk:<device> (e.g. dpdk:net_af_xdp0,iface=veth0, dpdk:0000:3b:00.0) "
                  "or afpacket:<interface>; repeat it for each NIC, in rail order (local rank i "
                  "uses NIC i % NICs, each NIC with its own engine thread)")
      ->required();
  cmd->add_option("--engine-cores", opt->engine_cores,
                  "the CPU each engine thread is pinned to, in --port order, a NIC's queues in "
                  "turn (default: not pinned)")
      ->delimiter(',')->check(CLI::NonNegativeNumber);
  cmd->add_option("--queues-per-nic", opt->queues_per_nic,
                  "engines per NIC, each on a queue pair of the NIC's DPDK port, for a NIC one core "
                  "cannot fill; every host of the job must give the same")
      ->check(CLI::Range(1u, 16u))->capture_default_str();
  cmd->add_option("--queue-steering", opt->queue_steering,
                  "how a QP's frames reach its engine's queue: flow-rules (rte_flow on the QP's "
                  "UDP source port; queues a power of two) or none (a device that keeps frames on "
                  "their sender's queue, e.g. a memif pair)")
      ->check(CLI::IsMember({"flow-rules", "none"}))->capture_default_str();
  cmd->add_option_function<std::vector<std::string>>(
      "--eal-arg", [&r](const std::vector<std::string>& args) { for (const auto& a : args) r.add_eal_args(a); },
      "one more DPDK EAL argument, after collide's own (repeatable; e.g. --eal-arg=--log-level=8)");
  cmd->add_option("--netns", *r.mutable_netns(), "run inside this network namespace (ip netns name)");
  cmd->add_option("--lcore", opt->lcore, "CPU for DPDK's main thread")->capture_default_str();
  cmd->add_option("--rank-ip-base", *r.mutable_rank_ip_base(), "rank r sends from this address + r (default 198.18.1.0)");
  cmd->add_option("--rank-addresses", opt->rank_addresses,
                  "base (rank r at --rank-ip-base + r), testbed (the virtual testbed's subnets) "
                  "or list (--rank-ip for every rank)")
      ->check(CLI::IsMember({"base", "testbed", "list"}))->capture_default_str();
  cmd->add_option("--rank-ip", opt->rank_ips, "RANK=IPV4: a rank's address (--rank-addresses=list)")
      ->delimiter(',');
  cmd->add_option("--next-hop-mac", opt->next_hop_mac, "MAC frames to other hosts go to (every NIC)");
  cmd->add_option("--host-mac", opt->host_macs, "HOST=MAC: where frames for a host's ranks go");
  cmd->add_option("--mtu", opt->mtu, "RoCE payload bytes per packet" + default_text(D::kMtuBytes));
  cmd->add_option("--recovery", opt->recovery, "go-back-n, selective-repeat or out-of-order")
      ->check(CLI::IsMember({"go-back-n", "selective-repeat", "out-of-order"}))->capture_default_str();
  cmd->add_option("--ack-every", opt->ack_every, "request an ACK every N packets" + default_text(D::kAckEvery));
  cmd->add_option("--max-outstanding", opt->max_outstanding,
                  "packets a QP may have unacknowledged (bounds what is in flight)" +
                      default_text(D::kMaxOutstanding));
  cmd->add_option("--timeout-exponent", opt->timeout_exponent,
                  "NCCL_IB_TIMEOUT: 4.096 us * 2^t per attempt" + default_text(D::kTimeoutExponent));
  cmd->add_option("--timeout-scale", opt->timeout_scale, "multiply the timeout (testbeds) (0: 1)");
  cmd->add_option("--retry-count", opt->retry_count, "NCCL_IB_RETRY_CNT" + default_text(D::kRetryCount));
  cmd->add_option("--channels", opt->channels, "NCCL channels" + default_text(D::kChannels));
  cmd->add_option("--qps", opt->qps,
                  "QPs per connection (NCCL_IB_QPS_PER_CONNECTION)" + default_text(D::kQpsPerConnection));
  cmd->add_option("--slice-bytes", opt->slice,
                  "pipelining slice, e.g. 512KiB or 1MB (KB = 1000 B, KiB = 1024 B)" +
                      default_text(D::kSliceBytes));
  cmd->add_option("--algorithm", opt->algorithm, "all-reduce algorithm: ring or tree")
      ->check(CLI::IsMember({"ring", "tree"}))->capture_default_str();
  cmd->add_option("--dscp", opt->dscp,
                  "DSCP of every RoCE frame (NCCL_IB_TC / 4); switches queue it in priority DSCP / 8" +
                      default_text(D::kDscp))
      ->check(CLI::Range(0u, 63u));
  cmd->add_flag("--dcqcn", opt->dcqcn, "react to CNPs with DCQCN");
  cmd->add_flag("--lossless", opt->lossless,
                fmt::format("a drain pause holds frames and pauses the leaf port (PFC priority {}, "
                            "{} quanta) from {} frames waiting until {}",
                            orchestrator::testbed::kDefaultPfcPriority,
                            orchestrator::testbed::kDefaultPauseQuanta,
                            orchestrator::testbed::kDefaultHostXoffFrames,
                            orchestrator::testbed::kDefaultHostXoffFrames / 4));
  cmd->add_flag("--no-pxn", opt->no_pxn,
                "NCCL_PXN_DISABLE: a transfer to another rail leaves from the sender's own NIC "
                "(default: over NVLink to the host-mate on the peer's rail, then its NIC)");
  cmd->add_option_function<double>("--line-rate-gbps", [&r](double g) { r.set_dcqcn_line_rate_gbps(g); },
                                   "DCQCN's line rate (default 100)");
  cmd->add_option_function<double>("--pace-gbps", [&r](double g) { r.set_pace_gbps(g); },
                                   "the port's line rate in Gb/s, Ethernet overhead included (0: as "
                                   "fast as the port takes frames)");
  cmd->add_option_function<uint32_t>("--pace-burst", [&r](uint32_t n) { r.set_pace_burst(n); },
                                     "frames that may leave back to back at the paced rate (default 32)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--pcap", *r.mutable_pcap_file(),
                  "write what the port sends and receives to this pcap file (ns timestamps)");
  cmd->add_option_function<uint64_t>("--pcap-max-packets", [&r](uint64_t n) { r.set_pcap_max_packets(n); },
                                     "stop capturing after this many (default 100000)");
  cmd->add_flag("--no-verify", opt->no_verify, "skip the payload pattern (faster, less proof)");
  cmd->add_option("--timing", opt->timing, "fast (back to back) or trace (the trace's compute gaps)")
      ->check(CLI::IsMember({"fast", "trace"}))->capture_default_str();
  cmd->add_option_function<double>("--timeout", [&r](double s) { r.set_timeout_s(s); },
                                   "give up after this many seconds (default 600)");
  cmd->add_option_function<double>("--progress-every", [&r](double s) { r.set_progress_every_s(s); },
                                   "print a line `progress OPS PACKETS RESENT` this often (seconds; 0: never)");
  cmd->add_option("--results", opt->results, "write the results JSON here (default: stdout)");
  cmd->add_option("--wait-for-file", opt->wait_for_file,
                  "after the port is up, start only once this file exists");
  cmd->add_option("--drain-pause", opt->drain_pauses,
                  "START:DURATION: stop draining the receive ring for the window (a slow "
                  "receiver), counted from the replay's start; repeatable");
  cmd->add_option_function<uint32_t>(
      "--drain-buffer-frames", [&r](uint32_t n) { r.set_drain_buffer_frames(n); },
      "in a drain pause, the NIC keeps at most this many frames and drops (counting) what else arrives, "
      "as a NIC whose host stopped draining it does (default: frames wait in the receive ring)");
  cmd->add_option("--send-delay", opt->send_delays,
                  "START:DURATION:DELAY: hold every frame sent in the window for DELAY (a slow "
                  "sender); repeatable");
  cmd->callback([opt] { run_replay(*opt); });

  // An agent's replay child: speaks collide/replay.proto on fd 3 (not for people; hidden).
  CLI::App* child = app.add_subcommand("replay-child", "");
  child->group("");
  auto label = std::make_shared<std::string>();
  child->add_option("--label", *label, "what it serves, for `ps` to show (not read)");
  child->callback([label] {
    const int code = replay::serve_replay_child(replay::kChildFd);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace collide::cli
