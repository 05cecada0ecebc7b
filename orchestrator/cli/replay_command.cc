// `collide replay`: replays the ranks one host holds, from a trace, over one packet port. This is
// what each agent runs; alone it lets a person drive a two-host test by hand.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/netns.h"
#include "injectors/fault_rules.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/testbed/testbed_plan.h"
#include "replayer/backend/pcap_capture_port.h"
#include "replayer/backend/port_factory.h"
#include "replayer/backend/tsc_clock.h"
#include "replayer/collectives/accounting.h"
#include "replayer/engine/engine.h"
#include "traces/op_types.h"
#include "traces/rank_programs.h"

namespace collide::cli {
namespace {

namespace coll = replayer::collectives;
namespace eng = replayer::engine;
namespace tp = replayer::transport;
namespace wire = replayer::wire;

struct ReplayOptions {
  std::string trace;
  std::vector<uint32_t> ranks;
  uint32_t ranks_per_host = 8;
  uint32_t nics_per_host = 0;
  std::string port;
  std::string netns;
  int lcore = 0;
  std::string rank_ip_base = "198.18.1.0";
  std::string rank_addresses = "base";
  std::string next_hop_mac;
  std::vector<std::string> host_macs;
  std::vector<std::string> rank_ips;  // RANK=IPV4, with rank_addresses "list"
  uint32_t mtu = 4096;
  std::string recovery = "go-back-n";
  uint32_t ack_every = 16;
  uint32_t max_outstanding = 4096;
  uint32_t timeout_exponent = 14;
  double timeout_scale = 1.0;
  uint32_t retry_count = 7;
  uint32_t channels = 2;
  uint32_t qps = 1;
  uint64_t slice_bytes = 512 * 1024;
  std::string algorithm = "ring";
  bool dcqcn = false;
  double line_rate_gbps = 100;
  double pace_gbps = 0;
  uint32_t pace_burst = 32;
  std::string pcap;
  uint64_t pcap_max_packets = 100000;
  bool no_verify = false;
  std::string timing = "fast";
  double timeout_s = 600;
  double progress_every_s = 0;
  std::string results;
  std::string wait_for_file;
  std::vector<std::string> drain_pauses;  // START:DURATION
  std::vector<std::string> send_delays;   // START:DURATION:DELAY
};

// "START:DURATION[:DELAY]" with durations as `collide inject` reads them ("2s", "150ms", "40us";
// a zero duration lasts to the end of the replay).
std::vector<std::chrono::nanoseconds> parse_hook(const std::string& flag, const std::string& text,
                                                 size_t fields) {
  std::vector<std::chrono::nanoseconds> out;
  size_t from = 0;
  for (size_t i = 0; i < fields; ++i) {
    const size_t colon = i + 1 < fields ? text.find(':', from) : std::string::npos;
    const std::string part = text.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    auto d = injectors::parse_duration(part);
    if (part.empty() || !d.ok() || (i + 1 < fields && colon == std::string::npos)) {
      fail("replay", kExitUsage,
           fmt::format("{} wants {}, got '{}'", flag,
                       fields == 2 ? "START:DURATION" : "START:DURATION:DELAY", text));
    }
    out.push_back(*d);
    from = colon + 1;
  }
  return out;
}

const char* hook_kind_name(eng::HookWindow::Kind kind) {
  return kind == eng::HookWindow::Kind::kDrainPause ? "drain_pause" : "send_delay";
}

// "R=a.b.c.d" pairs: the address of rank R (real hosts, --rank-addresses=list).
std::map<uint32_t, wire::Ipv4Address> parse_rank_ips(const std::vector<std::string>& specs) {
  std::map<uint32_t, wire::Ipv4Address> out;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    auto ip = eq == std::string::npos || eq == 0 ? Result<wire::Ipv4Address>(invalid_argument(""))
                                                 : wire::Ipv4Address::parse(spec.substr(eq + 1));
    if (!ip.ok() || spec.find_first_not_of("0123456789") != eq) {
      fail("replay", kExitUsage, fmt::format("--rank-ip wants RANK=IPV4, got '{}'", spec));
    }
    out[static_cast<uint32_t>(std::stoul(spec.substr(0, eq)))] = *ip;
  }
  return out;
}

// "H=aa:bb:cc:dd:ee:ff" pairs: the MAC that frames for ranks on host H go to.
std::map<uint32_t, wire::MacAddress> parse_host_macs(const std::vector<std::string>& specs) {
  std::map<uint32_t, wire::MacAddress> out;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    auto mac = eq == std::string::npos ? Result<wire::MacAddress>(invalid_argument(""))
                                       : wire::MacAddress::parse(spec.substr(eq + 1));
    if (!mac.ok()) fail("replay", kExitUsage, fmt::format("--host-mac wants HOST=MAC, got '{}'", spec));
    out[static_cast<uint32_t>(std::stoul(spec.substr(0, eq)))] = *mac;
  }
  return out;
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
          {"icrc_errors", c.icrc_errors},
          {"pattern_errors", c.pattern_errors},
          {"tx_frames", c.tx_frames},
          {"tx_bytes", c.tx_bytes},
          {"packets_sent", c.requesters.packets_sent},
          {"retransmitted_packets", c.requesters.retransmitted_packets},
          {"naks_received", c.requesters.naks},
          {"timeouts", c.requesters.timeouts},
          {"cnps_received", c.requesters.cnps},
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

// Our ranks are done, but a peer may still be waiting for the ACK of its last packets: if that
// ACK was lost, its retransmission must find us answering (a NIC does not go away when its
// process's work is done). Keep polling until no frame has come for `quiet`, and no longer than
// ten times that: longer than a peer's whole retry budget.
void linger(eng::Engine& engine, replayer::backend::PacketPort& port, tp::Nanos quiet) {
  const auto quiet_for = std::chrono::nanoseconds(quiet);
  const auto give_up = std::chrono::steady_clock::now() + 10 * quiet_for;
  auto last_frame = std::chrono::steady_clock::now();
  uint64_t seen = engine.counters().rx_frames;
  while (std::chrono::steady_clock::now() - last_frame < quiet_for &&
         std::chrono::steady_clock::now() < give_up) {
    engine.poll();
    if (const uint64_t now_seen = engine.counters().rx_frames; now_seen != seen) {
      seen = now_seen;
      last_frame = std::chrono::steady_clock::now();
    } else {
      port.wait_for_frames(std::chrono::microseconds(500));
    }
  }
}

// Runs the engine to the end, in slices when progress is asked for: between slices one line on
// Set by SIGTERM or SIGINT: the replay stops between slices and still writes what it recorded,
// so that whoever stopped it (an agent told to stop) keeps the ops that finished.
std::atomic<bool> g_stop_requested{false};

void on_stop_signal(int) { g_stop_requested.store(true); }

// How often a replay without progress lines still looks for a stop request.
constexpr double kStopCheckEvery_s = 0.2;

// stdout says how far it got, for whoever drives this replay (an agent) to pass on while it runs.
Status run_reporting_progress(eng::Engine& engine, double timeout_s, double every_s) {
  const auto timeout = std::chrono::nanoseconds(static_cast<int64_t>(timeout_s * 1e9));
  const bool print = every_s > 0;
  const auto slice = std::chrono::nanoseconds(static_cast<int64_t>((print ? every_s : kStopCheckEvery_s) * 1e9));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = deadline - std::chrono::steady_clock::now();
    Status s = engine.run(std::min<std::chrono::nanoseconds>(slice, left));
    if (s.code() != StatusCode::kDeadlineExceeded || std::chrono::steady_clock::now() >= deadline) {
      return s;
    }
    if (g_stop_requested.load()) return unavailable("stopped by a signal before the job ended");
    if (!print) continue;
    const eng::EngineCounters c = engine.counters();
    std::cout << "progress " << engine.ops_recorded() << " " << c.requesters.packets_sent << " "
              << c.requesters.retransmitted_packets << " " << c.requesters.timeouts << std::endl;
  }
}


void run_replay(const ReplayOptions& opt) {
  // Before any thread or socket exists, so all of them live in the namespace.
  if (!opt.netns.empty()) {
    if (Status s = netns::enter(opt.netns); !s.ok()) fail("replay", kExitUsage, s.message());
  }
  auto recovery = tp::parse_recovery(opt.recovery);
  if (!recovery.ok()) fail("replay", kExitUsage, recovery.status().message());
  auto ip_base = wire::Ipv4Address::parse(opt.rank_ip_base);
  if (!ip_base.ok()) fail("replay", kExitUsage, ip_base.status().message());
  std::optional<wire::MacAddress> next_hop;
  if (!opt.next_hop_mac.empty()) {
    auto mac = wire::MacAddress::parse(opt.next_hop_mac);
    if (!mac.ok()) fail("replay", kExitUsage, mac.status().message());
    next_hop = *mac;
  }
  const auto host_macs = parse_host_macs(opt.host_macs);
  const auto listed_ips = parse_rank_ips(opt.rank_ips);
  if (!next_hop && host_macs.empty()) fail("replay", kExitUsage, "give --next-hop-mac or --host-mac");

  const std::set<uint32_t> local(opt.ranks.begin(), opt.ranks.end());
  auto programs = traces::read_rank_programs(opt.trace, local);
  if (!programs.ok()) fail("replay", kExitUsage, programs.status().message());
  const v1::TraceHeader& header = programs->header;
  auto placement = coll::Placement::uniform(
      header.world_size(), opt.ranks_per_host,
      opt.nics_per_host == 0 ? opt.ranks_per_host : opt.nics_per_host);
  if (!placement.ok()) fail("replay", kExitUsage, placement.status().message());

  eng::EngineConfig config;
  config.qp.mtu = opt.mtu;
  config.qp.recovery = *recovery;
  config.qp.ack_every = opt.ack_every;
  config.qp.max_outstanding = opt.max_outstanding;
  config.qp.timeout_exponent = opt.timeout_exponent;
  config.qp.timeout_scale = opt.timeout_scale;
  config.qp.retry_count = opt.retry_count;
  config.dcqcn.enabled = opt.dcqcn;
  config.dcqcn.line_rate_gbps = opt.line_rate_gbps;
  config.verify_payload = !opt.no_verify;
  config.pace_gbps = opt.pace_gbps;
  config.pace_burst = opt.pace_burst;
  config.honor_compute_gaps = opt.timing == "trace";
  for (const std::string& text : opt.drain_pauses) {
    const auto t = parse_hook("--drain-pause", text, 2);
    config.drain_pauses.push_back({t[0], t[1]});
  }
  for (const std::string& text : opt.send_delays) {
    const auto t = parse_hook("--send-delay", text, 3);
    config.send_delays.push_back({t[0], t[1], t[2]});
  }
  coll::ExpandOptions expand;
  expand.channels = opt.channels;
  expand.qps_per_connection = opt.qps;
  expand.slice_bytes = opt.slice_bytes;
  expand.all_reduce = opt.algorithm == "tree" ? coll::AllReduceAlgorithm::kTree
                                              : coll::AllReduceAlgorithm::kRing;

  // Room for the largest data frame: headers, RETH, payload, ICRC.
  auto port = replayer::backend::open_port(opt.port, opt.lcore, opt.mtu + 128);
  if (!port.ok()) fail("replay", kExitUsage, port.status().message());
  replayer::backend::PcapCapturePort* capture = nullptr;
  if (!opt.pcap.empty()) {
    auto wrapped = replayer::backend::PcapCapturePort::open(std::move(port).value(), opt.pcap,
                                                            opt.pcap_max_packets);
    if (!wrapped.ok()) fail("replay", kExitUsage, wrapped.status().message());
    capture = wrapped->get();
    port = std::unique_ptr<replayer::backend::PacketPort>(std::move(wrapped).value());
  }

  const collide::replayer::collectives::Placement& pl = *placement;
  eng::RankAddressing addressing;
  std::vector<uint32_t> rank_ips(header.world_size());
  if (opt.rank_addresses == "testbed") {
    // The virtual testbed's scheme: each host NIC routes its own /27 of rank addresses.
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> slots;
    for (uint32_t r = 0; r < header.world_size(); ++r) {
      const uint32_t host = pl.host_of_rank[r], nic = pl.nic_of_rank[r];
      rank_ips[r] = orchestrator::testbed::rank_address(host, nic, slots[{host, nic}]++);
    }
  } else if (opt.rank_addresses == "list") {
    // Real hosts: each rank at an address of its host's NIC, as the orchestrator placed it.
    for (uint32_t r = 0; r < header.world_size(); ++r) {
      auto it = listed_ips.find(r);
      if (it == listed_ips.end()) fail("replay", kExitUsage, fmt::format("--rank-ip gives no address for rank {}", r));
      rank_ips[r] = it->second.host_order;
    }
  } else {
    for (uint32_t r = 0; r < header.world_size(); ++r) rank_ips[r] = ip_base->host_order + r;
  }
  addressing.ip_of = [rank_ips](uint32_t r) { return wire::Ipv4Address{rank_ips[r]}; };
  addressing.next_hop_mac = [&, next_hop](uint32_t r) {
    auto it = host_macs.find(pl.host_of_rank[r]);
    return it != host_macs.end() ? it->second : next_hop.value_or(wire::MacAddress{});
  };
  // The pacer asks the time for every frame: read it from the TSC (DPDK's rate when its EAL is
  // up, after the port opened it).
  const auto tsc = replayer::backend::TscClock::calibrate();
  auto clock = [tsc] { return tsc.now(); };
  auto engine = eng::Engine::create(config, header, *placement, expand,
                                    std::move(programs).value().ops, addressing, **port, clock);
  if (!engine.ok()) fail("replay", kExitUsage, engine.status().message());

  std::cout << "ready " << (*port)->mac().to_string() << std::endl;
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
  if (!opt.wait_for_file.empty()) {
    // Several hosts start together: each waits until whoever runs them says go.
    while (!std::filesystem::exists(opt.wait_for_file) && !g_stop_requested.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  const auto started = std::chrono::steady_clock::now();
  const Status run = run_reporting_progress(**engine, opt.timeout_s, opt.progress_every_s);
  if (run.ok()) linger(**engine, **port, 2 * config.qp.timeout_ns());
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::unordered_map<std::string, uint32_t> comm_sizes;
  for (const auto& c : header.communicators()) comm_sizes[c.id()] = c.ranks_size();
  nlohmann::json out;
  out["trace"] = opt.trace;
  out["port"] = (*port)->describe();
  out["ranks"] = opt.ranks;
  out["wall_seconds"] = wall_s;
  nlohmann::json ops = nlohmann::json::array();
  for (const eng::OpRecord& r : (*engine)->take_records()) ops.push_back(op_json(r, comm_sizes[r.comm]));
  out["ops"] = std::move(ops);
  out["counters"] = counters_json((*engine)->counters());
  nlohmann::json hooks = nlohmann::json::array();
  for (const eng::HookWindow& w : (*engine)->hook_windows()) {
    hooks.push_back({{"kind", hook_kind_name(w.kind)}, {"start_ns", w.start_ns}, {"end_ns", w.end_ns}});
  }
  out["hooks"] = std::move(hooks);
  const auto pc = (*port)->counters();
  out["port_counters"] = {{"tx_frames", pc.tx_frames}, {"rx_frames", pc.rx_frames},
                          {"rx_dropped", pc.rx_dropped}, {"tx_errors", pc.tx_errors}};
  if (capture != nullptr) {
    capture->flush();
    out["pcap"] = {{"file", opt.pcap},
                   {"captured", capture->captured()},
                   {"not_captured", capture->not_captured()}};
  }
  out["stopped"] = g_stop_requested.load();
  out["ok"] = run.ok();
  out["failure"] = run.ok() ? "" : run.message();
  if (!opt.results.empty()) {
    std::ofstream(opt.results) << out.dump(2) << "\n";
  } else {
    std::cout << out.dump(2) << "\n";
  }
  const auto& c = (*engine)->counters();
  std::cerr << fmt::format("collide replay: {} ops of ranks [{}] in {:.3f} s; {} packets sent, {} "
                           "retransmitted, {} timeouts; {} B received, {} ICRC and {} payload "
                           "errors\n",
                           out["ops"].size(), fmt::join(opt.ranks, ","), wall_s,
                           c.requesters.packets_sent, c.requesters.retransmitted_packets,
                           c.requesters.timeouts, c.responders.bytes_received, c.icrc_errors,
                           c.pattern_errors);
  if (!run.ok()) fail("replay", kExitFailed, run.message());
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto opt = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay the ranks of one host from a trace as RoCEv2 over one port (an agent's "
                "data plane)");
  cmd->add_option("trace", opt->trace, "collide trace file")->required();
  cmd->add_option("--ranks", opt->ranks, "global ranks this host runs (e.g. 0,1)")
      ->required()->delimiter(',');
  cmd->add_option("--ranks-per-host", opt->ranks_per_host, "placement: consecutive ranks per host")
      ->capture_default_str();
  cmd->add_option("--nics-per-host", opt->nics_per_host, "NICs (rails) per host (default: one per rank)");
  cmd->add_option("--port", opt->port,
                  "dpdk:<device> (e.g. dpdk:net_af_xdp0,iface=veth0) or afpacket:<interface>")
      ->required();
  cmd->add_option("--netns", opt->netns, "run inside this network namespace (ip netns name)");
  cmd->add_option("--lcore", opt->lcore, "CPU for DPDK's main thread")->capture_default_str();
  cmd->add_option("--rank-ip-base", opt->rank_ip_base, "rank r sends from this address + r")
      ->capture_default_str();
  cmd->add_option("--rank-addresses", opt->rank_addresses,
                  "base (rank r at --rank-ip-base + r), testbed (the virtual testbed's subnets) "
                  "or list (--rank-ip for every rank)")
      ->check(CLI::IsMember({"base", "testbed", "list"}))->capture_default_str();
  cmd->add_option("--rank-ip", opt->rank_ips, "RANK=IPV4: a rank's address (--rank-addresses=list)")
      ->delimiter(',');
  cmd->add_option("--next-hop-mac", opt->next_hop_mac, "MAC frames to other hosts go to");
  cmd->add_option("--host-mac", opt->host_macs, "HOST=MAC: where frames for a host's ranks go");
  cmd->add_option("--mtu", opt->mtu, "RoCE payload bytes per packet")->capture_default_str();
  cmd->add_option("--recovery", opt->recovery, "go-back-n or selective-repeat")->capture_default_str();
  cmd->add_option("--ack-every", opt->ack_every, "request an ACK every N packets")->capture_default_str();
  cmd->add_option("--max-outstanding", opt->max_outstanding,
                  "packets a QP may have unacknowledged (bounds what is in flight)")
      ->capture_default_str();
  cmd->add_option("--timeout-exponent", opt->timeout_exponent,
                  "NCCL_IB_TIMEOUT: 4.096 us * 2^t per attempt")->capture_default_str();
  cmd->add_option("--timeout-scale", opt->timeout_scale, "multiply the timeout (testbeds)")
      ->capture_default_str();
  cmd->add_option("--retry-count", opt->retry_count, "NCCL_IB_RETRY_CNT")->capture_default_str();
  cmd->add_option("--channels", opt->channels, "NCCL channels")->capture_default_str();
  cmd->add_option("--qps", opt->qps, "QPs per connection (NCCL_IB_QPS_PER_CONNECTION)")
      ->capture_default_str();
  cmd->add_option("--slice-bytes", opt->slice_bytes, "pipelining slice")->capture_default_str();
  cmd->add_option("--algorithm", opt->algorithm, "all-reduce algorithm: ring or tree")
      ->check(CLI::IsMember({"ring", "tree"}))->capture_default_str();
  cmd->add_flag("--dcqcn", opt->dcqcn, "react to CNPs with DCQCN");
  cmd->add_option("--line-rate-gbps", opt->line_rate_gbps, "DCQCN's line rate")->capture_default_str();
  cmd->add_option("--pace-gbps", opt->pace_gbps,
                  "the port's line rate in Gb/s, Ethernet overhead included (0: as fast as the "
                  "port takes frames)");
  cmd->add_option("--pace-burst", opt->pace_burst,
                  "frames that may leave back to back at the paced rate")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--pcap", opt->pcap,
                  "write what the port sends and receives to this pcap file (ns timestamps)");
  cmd->add_option("--pcap-max-packets", opt->pcap_max_packets, "stop capturing after this many")
      ->capture_default_str();
  cmd->add_flag("--no-verify", opt->no_verify, "skip the payload pattern (faster, less proof)");
  cmd->add_option("--timing", opt->timing, "fast (back to back) or trace (the trace's compute gaps)")
      ->check(CLI::IsMember({"fast", "trace"}))->capture_default_str();
  cmd->add_option("--timeout", opt->timeout_s, "give up after this many seconds")->capture_default_str();
  cmd->add_option("--progress-every", opt->progress_every_s,
                  "print a line `progress OPS PACKETS RESENT TIMEOUTS` this often (seconds; 0: never)");
  cmd->add_option("--results", opt->results, "write the results JSON here (default: stdout)");
  cmd->add_option("--wait-for-file", opt->wait_for_file,
                  "after the port is up, start only once this file exists");
  cmd->add_option("--drain-pause", opt->drain_pauses,
                  "START:DURATION: stop draining the receive ring for the window (a slow "
                  "receiver), counted from the replay's start; repeatable");
  cmd->add_option("--send-delay", opt->send_delays,
                  "START:DURATION:DELAY: hold every frame sent in the window for DELAY (a slow "
                  "sender); repeatable");
  cmd->callback([opt] { run_replay(*opt); });
}

}  // namespace collide::cli
