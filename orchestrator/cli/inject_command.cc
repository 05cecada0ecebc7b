// `collide inject`: per-packet faults on one device with the eBPF fault injector, until a duration
// passes or SIGINT/SIGTERM, then the per-rule counters. Each fault family has one function that
// turns its flags into rules; a new family adds its flags and one such function.
#include <net/if.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/netns.h"
#include "injectors/fault_injector.h"
#include "injectors/fault_rules.h"
#include "injectors/guardian.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/inject_link_faults.h"
#include "orchestrator/cli/inject_pfc_storm.h"
#include "orchestrator/cli/start_sweep.h"

namespace collide::cli {
namespace {

namespace inj = injectors;

struct InjectOptions {
  // Where.
  std::string dev;
  std::string netns;
  std::string direction = "ingress";
  bool xdp = false;  // ingress on the XDP hook instead of tc
  // Match (shared by every rule this command makes).
  std::string src;
  std::string dst;
  std::string proto;
  std::string sport;
  std::string dport;
  std::string opcode;
  std::string qp;
  std::string psn_range;
  std::vector<uint32_t> dscp;
  std::vector<uint32_t> ecn;
  // When.
  std::string window;
  std::string duration;
  // Faults.
  std::string loss;
  std::string gilbert;
  std::string burst;
  std::string drop_psn;
  uint64_t every_nth = 0;
  bool blackhole = false;
  std::string corrupt;
  bool silent = false;
  std::string duplicate;
  std::string ecn_mark;
  std::string police;
  // Control and output.
  uint64_t seed = 1;
  std::vector<uint16_t> allow_tcp{22};
  std::vector<uint16_t> allow_udp;
  std::vector<std::string> allow_prefix;
  std::string lease = "3s";
  std::string events;
  bool json = false;
  LinkFaultOptions link;  // --flap, --rate, --sweep
  PfcStormFlags storm;    // --pfc-storm
};

// Whether any per-packet fault flag is given (a PFC storm is a command of its own).
bool wants_packet_faults(const InjectOptions& o) {
  return !o.loss.empty() || !o.gilbert.empty() || !o.burst.empty() || !o.drop_psn.empty() ||
         o.every_nth != 0 || o.blackhole || !o.corrupt.empty() || !o.duplicate.empty() ||
         !o.ecn_mark.empty() || !o.police.empty();
}

[[noreturn]] void usage(const std::string& message) { fail("inject", kExitUsage, message); }

template <typename T>
T or_usage(Result<T> r, const std::string& flag) {
  if (!r.ok()) usage(fmt::format("{}: {}", flag, r.status().message()));
  return std::move(r).value();
}

inj::FaultMatch build_match(const InjectOptions& o, int ifindex) {
  inj::FaultMatch m;
  m.ifindex = ifindex;  // only ever the device named
  if (!o.src.empty()) m.src = or_usage(inj::parse_prefix(o.src), "--src");
  if (!o.dst.empty()) m.dst = or_usage(inj::parse_prefix(o.dst), "--dst");
  if (!o.proto.empty()) m.l4_proto = or_usage(inj::parse_protocol(o.proto), "--proto");
  if (!o.sport.empty()) m.sport = or_usage(inj::parse_port_range(o.sport), "--sport");
  if (!o.dport.empty()) m.dport = or_usage(inj::parse_port_range(o.dport), "--dport");
  if (!o.dscp.empty()) {
    m.dscp.reset();
    for (uint32_t d : o.dscp) {
      if (d > 63) usage(fmt::format("--dscp: {} is above 63", d));
      m.dscp.set(d);
    }
  }
  if (!o.ecn.empty()) {
    m.ecn.reset();
    for (uint32_t e : o.ecn) {
      if (e > 3) usage(fmt::format("--ecn-match: {} is above 3", e));
      m.ecn.set(e);
    }
  }
  if (!o.opcode.empty()) {
    m.roce = true;
    m.opcodes = or_usage(inj::parse_opcodes(o.opcode), "--opcode");
  }
  if (!o.qp.empty()) {
    m.roce = true;
    m.qp = or_usage(inj::parse_u24_range(o.qp), "--qp");
  }
  if (!o.psn_range.empty()) {
    m.roce = true;
    m.psn = or_usage(inj::parse_u24_range(o.psn_range), "--psn-range");
  }
  return m;
}

// Every rule starts from the shared match, window and seed.
inj::FaultRule base_rule(const InjectOptions& o, const inj::FaultMatch& match,
                         std::vector<inj::FaultRule>& rules) {
  inj::FaultRule r;
  r.id = static_cast<uint32_t>(rules.size());
  r.match = match;
  r.seed = o.seed;
  if (!o.window.empty()) r.window = or_usage(inj::parse_window(o.window), "--window");
  return r;
}

void add_drop_rules(const InjectOptions& o, const inj::FaultMatch& m,
                    std::vector<inj::FaultRule>& rules) {
  if (o.blackhole) {
    inj::FaultRule r = base_rule(o, m, rules);
    r.decider = inj::Decider::kAlways;
    r.description = "drop all (blackhole)";
    rules.push_back(r);
  }
  if (!o.drop_psn.empty()) {
    inj::FaultRule r = base_rule(o, m, rules);
    r.decider = inj::Decider::kPsnList;
    r.psns = or_usage(inj::parse_number_list(o.drop_psn, 0xffffff), "--drop-psn");
    r.description = fmt::format("drop {} listed PSNs", r.psns.size());
    rules.push_back(r);
  }
  if (o.every_nth > 0) {
    inj::FaultRule r = base_rule(o, m, rules);
    r.decider = inj::Decider::kEveryNth;
    r.every_nth = o.every_nth;
    r.description = fmt::format("drop every {}th", o.every_nth);
    rules.push_back(r);
  }
  if (!o.loss.empty()) {
    inj::FaultRule r = base_rule(o, m, rules);
    r.decider = inj::Decider::kBernoulli;
    r.probability = or_usage(inj::parse_probability(o.loss), "--loss");
    r.description = fmt::format("drop bernoulli {}", o.loss);
    rules.push_back(r);
  }
  if (!o.gilbert.empty()) {
    inj::FaultRule r = base_rule(o, m, rules);
    r.decider = inj::Decider::kGilbert;
    r.gilbert = or_usage(inj::parse_gilbert(o.gilbert), "--gilbert");
    r.description = fmt::format("drop gilbert p={} r={} h={} k={}", r.gilbert.p, r.gilbert.r,
                                r.gilbert.h, r.gilbert.k);
    rules.push_back(r);
  }
  if (!o.burst.empty()) {
    inj::FaultRule r = base_rule(o, m, rules);
    r.decider = inj::Decider::kMarkov4;
    r.markov4 = or_usage(inj::parse_markov4(o.burst), "--burst");
    r.description = fmt::format("drop 4-state {}", o.burst);
    rules.push_back(r);
  }
}

void add_police_rules(const InjectOptions& o, const inj::FaultMatch& m,
                      std::vector<inj::FaultRule>& rules) {
  if (o.police.empty()) return;
  const size_t comma = o.police.find(',');
  if (comma == std::string::npos) usage("--police takes RATE,BURST (e.g. 10gbit,64k)");
  inj::FaultRule r = base_rule(o, m, rules);
  r.decider = inj::Decider::kPolice;
  r.rate_bytes_per_s = or_usage(inj::parse_rate(o.police.substr(0, comma)), "--police rate");
  r.burst_bytes = or_usage(inj::parse_size(o.police.substr(comma + 1)), "--police burst");
  r.description = fmt::format("police {}", o.police);
  rules.push_back(r);
}

void add_modify_rules(const InjectOptions& o, const inj::FaultMatch& m,
                      std::vector<inj::FaultRule>& rules) {
  auto add = [&](const std::string& text, const char* flag, inj::Action action,
                 const std::string& what) {
    if (text.empty()) return;
    inj::FaultRule r = base_rule(o, m, rules);
    r.decider = inj::Decider::kBernoulli;
    r.probability = or_usage(inj::parse_probability(text), flag);
    r.action = action;
    r.corrupt_silent = action == inj::Action::kCorrupt && o.silent;
    r.description = fmt::format("{} {}", what, text);
    rules.push_back(r);
  };
  add(o.corrupt, "--corrupt", inj::Action::kCorrupt, o.silent ? "corrupt (silent)" : "corrupt");
  add(o.ecn_mark, "--ecn", inj::Action::kEcnCe, "mark ECN CE");
  add(o.duplicate, "--duplicate", inj::Action::kDuplicate, "duplicate");
}

std::vector<inj::Direction> directions_of(const std::string& d) {
  if (d == "ingress") return {inj::Direction::kIngress};
  if (d == "egress") return {inj::Direction::kEgress};
  return {inj::Direction::kIngress, inj::Direction::kEgress};
}

nlohmann::json event_json(const collide_fault_event& e) {
  return {{"time_ns", e.time_ns},
          {"rule", e.rule_id},
          {"action", inj::action_name(static_cast<inj::Action>(e.action))},
          {"direction", e.direction == COLLIDE_FAULT_DIR_INGRESS ? "ingress" : "egress"},
          {"ifindex", e.ifindex},
          {"flow", fmt::format("{:016x}", e.flow_hash)},
          {"flow_index", e.flow_index},
          {"l4_proto", e.l4_proto},
          {"psn", e.roce ? nlohmann::json(e.psn) : nlohmann::json(nullptr)},
          {"qp", e.roce ? nlohmann::json(e.qp) : nlohmann::json(nullptr)},
          {"length", e.length}};
}

void print_results(const InjectOptions& o, const inj::FaultInjector& f, uint64_t armed_at,
                   double seconds, uint64_t events) {
  auto counters = f.counters();
  auto stats = f.stats();
  if (!counters.ok()) fail("inject", kExitFailed, counters.status().to_string());
  if (!stats.ok()) fail("inject", kExitFailed, stats.status().to_string());
  auto since = [&](uint64_t t) { return t == 0 ? -1.0 : static_cast<double>(t - armed_at) / 1e9; };
  if (o.json) {
    nlohmann::json rules = nlohmann::json::array();
    for (size_t i = 0; i < counters->size(); ++i) {
      const auto& c = (*counters)[i];
      rules.push_back({{"id", c.id},
                       {"fault", f.rules()[i].description},
                       {"matched", c.matched},
                       {"acted", c.acted},
                       {"bytes_acted", c.bytes_acted},
                       {"first_s", c.first_ns ? nlohmann::json(since(c.first_ns)) : nullptr},
                       {"last_s", c.last_ns ? nlohmann::json(since(c.last_ns)) : nullptr}});
    }
    std::cout << nlohmann::json{{"device", o.dev},
                                {"netns", o.netns},
                                {"direction", o.direction},
                                {"seconds", seconds},
                                {"packets_seen", stats->packets},
                                {"allowlisted", stats->allowed},
                                {"inert", stats->inert},
                                {"events", events},
                                {"events_lost", stats->events_lost},
                                {"rules", rules}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << fmt::format("{} {} for {:.3f} s: {} packets seen, {} allowlisted, {} while inert\n",
                           o.dev, o.direction, seconds, stats->packets, stats->allowed,
                           stats->inert);
  std::cout << fmt::format("{:<4} {:<34} {:>12} {:>12} {:>14} {:>9} {:>9}\n", "rule", "fault",
                           "matched", "acted", "bytes acted", "first s", "last s");
  for (size_t i = 0; i < counters->size(); ++i) {
    const auto& c = (*counters)[i];
    std::cout << fmt::format("{:<4} {:<34} {:>12} {:>12} {:>14} {:>9} {:>9}\n", c.id,
                             f.rules()[i].description, c.matched, c.acted, c.bytes_acted,
                             c.first_ns ? fmt::format("{:.3f}", since(c.first_ns)) : "-",
                             c.last_ns ? fmt::format("{:.3f}", since(c.last_ns)) : "-");
  }
  if (!o.events.empty()) {
    std::cout << fmt::format("{} events written to {} ({} lost: ring full)\n", events, o.events,
                             stats->events_lost);
  }
}

void run_inject(const InjectOptions& o) {
  if (o.link.sweep) return run_link_fault_sweep(o.link, o.netns);
  if (!o.storm.port.empty() && !wants_pfc_storm(o.storm)) {
    usage("--port is for --pfc-storm: other faults act on a kernel interface (--dev)");
  }
  if (o.dev.empty() && o.storm.port.empty()) usage("--dev is required (unless --sweep, or a --pfc-storm from --port)");
  sweep_at_start("inject", o.link.state_dir.empty() ? inj::default_state_dir()
                                                    : std::filesystem::path(o.link.state_dir));
  if (wants_pfc_storm(o.storm)) {
    if (wants_packet_faults(o) || wants_link_faults(o.link)) {
      usage("--pfc-storm sends frames of its own: give it without other faults");
    }
    return run_pfc_storm_command(o.storm, o.netns, o.dev, o.duration, o.json);
  }
  check_link_fault_options(o.link);
  // Everything is checked before anything is loaded or attached.
  // Left out, the faults hold until interrupted; a written 0 is a slip, not a request for forever.
  const auto duration = o.duration.empty() ? std::chrono::nanoseconds(0)
                                           : or_usage(inj::parse_duration(o.duration), "--duration");
  if (!o.duration.empty() && duration.count() == 0) {
    usage("--duration 0 would inject until interrupted: leave --duration out for that");
  }
  const auto lease = or_usage(inj::parse_duration(o.lease), "--lease");
  if (lease < std::chrono::milliseconds(30)) usage("--lease must be at least 30ms");
  inj::Allowlist allow;
  allow.tcp_ports = o.allow_tcp;
  allow.udp_ports = o.allow_udp;
  for (const auto& p : o.allow_prefix) allow.prefixes.push_back(or_usage(inj::parse_prefix(p), "--allow-prefix"));

  int ifindex = 0;
  std::unique_ptr<netns::Scope> scope;
  if (!o.netns.empty()) {
    auto s = netns::Scope::enter(o.netns);
    if (!s.ok()) usage(fmt::format("--netns {}: {}", o.netns, s.status().message()));
    scope = std::move(s).value();
  }
  ifindex = static_cast<int>(if_nametoindex(o.dev.c_str()));
  if (ifindex == 0) {
    usage(fmt::format("--dev {}: no such device{}", o.dev,
                      o.netns.empty() ? "" : " in namespace " + o.netns));
  }

  const inj::FaultMatch match = build_match(o, ifindex);
  std::vector<inj::FaultRule> rules;
  add_police_rules(o, match, rules);
  add_drop_rules(o, match, rules);
  add_modify_rules(o, match, rules);
  if (rules.empty() && wants_link_faults(o.link)) {
    scope.reset();
    return run_link_faults_only(o.link, o.netns, o.dev, o.direction, duration);
  }
  if (rules.empty()) {
    usage("no fault given (--loss, --gilbert, --burst, --drop-psn, --every-nth, --blackhole, "
          "--corrupt, --duplicate, --ecn, --police, --flap, --rate)");
  }
  for (const auto& r : rules) {
    if (Status s = inj::validate_rule(r); !s.ok()) usage(s.message());
  }
  if (o.xdp && o.direction != "ingress") usage("--xdp acts on ingress only (--direction ingress)");
  if (o.xdp && !o.duplicate.empty()) usage("--xdp cannot --duplicate: XDP has no way to copy a frame");

  std::ofstream events_out;
  if (!o.events.empty()) {
    events_out.open(o.events, std::ios::trunc);
    if (!events_out) usage(fmt::format("--events {}: cannot write: {}", o.events, std::strerror(errno)));
  }

  inj::FaultInjectorOptions fo;
  fo.rules = rules;
  fo.allow = allow;
  fo.events = !o.events.empty();
  fo.lease = std::chrono::duration_cast<std::chrono::milliseconds>(lease);
  auto loaded = inj::FaultInjector::load(std::move(fo));
  if (!loaded.ok()) fail("inject", kExitFailed, loaded.status().to_string());
  auto& f = **loaded;
  if (o.xdp) {
    if (Status s = f.attach_xdp(ifindex); !s.ok()) fail("inject", kExitFailed, s.to_string());
  }
  for (inj::Direction d : o.xdp ? std::vector<inj::Direction>{} : directions_of(o.direction)) {
    auto mode = f.attach(ifindex, d);
    if (!mode.ok()) fail("inject", kExitFailed, mode.status().to_string());
  }
  scope.reset();  // the links stay on the device

  // SIGINT/SIGTERM are taken synchronously; blocked before the lease thread starts so that it
  // inherits the mask and the signals come here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  if (Status s = f.arm(); !s.ok()) fail("inject", kExitFailed, s.to_string());
  const uint64_t armed_at = f.armed_at_ns();
  ActiveLinkFaultsPtr link_faults = start_link_faults(o.link, o.netns, o.dev, o.direction);
  std::cerr << fmt::format("collide inject: {} rule(s) on {} {}{}; {}\n", rules.size(), o.dev,
                           o.direction, o.netns.empty() ? "" : " in " + o.netns,
                           duration.count() ? fmt::format("for {:.3f} s", duration.count() / 1e9)
                                            : "until interrupted");
  uint64_t events = 0;
  auto drain = [&] {
    if (o.events.empty()) return;
    auto n = f.drain_events([&](const collide_fault_event& e) {
      events_out << event_json(e).dump() << "\n";
      ++events;
    });
    if (!n.ok()) std::cerr << "collide inject: " << n.status().to_string() << "\n";
  };
  while (true) {
    const uint64_t now = inj::FaultInjector::monotonic_ns();
    if (duration.count() && now - armed_at >= static_cast<uint64_t>(duration.count())) break;
    // Wake at least every 100 ms to drain events, sooner when the duration ends.
    uint64_t wait_ns = 100'000'000;
    if (duration.count()) {
      wait_ns = std::min(wait_ns, static_cast<uint64_t>(duration.count()) - (now - armed_at));
    }
    const timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000),
                      static_cast<long>(wait_ns % 1'000'000'000)};
    if (sigtimedwait(&stop_signals, nullptr, &ts) > 0) break;
    drain();
  }
  if (Status s = f.disarm(); !s.ok()) std::cerr << "collide inject: " << s.to_string() << "\n";
  const double seconds = static_cast<double>(inj::FaultInjector::monotonic_ns() - armed_at) / 1e9;
  drain();
  print_results(o, f, armed_at, seconds, events);
}

}  // namespace

void add_inject_command(CLI::App& app) {
  auto opt = std::make_shared<InjectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inject", "Inject per-packet faults (loss, burst loss, corruption, duplicates, ECN marks, "
                "policing) on one device with eBPF, then print what each rule did");
  cmd->add_option("--dev", opt->dev, "the device to act on (required unless --sweep)");
  cmd->add_option("--netns", opt->netns, "the device's network namespace (ip netns name)");
  cmd->add_option("--direction", opt->direction, "ingress, egress or both")
      ->check(CLI::IsMember({"ingress", "egress", "both"}))->capture_default_str();
  cmd->add_flag("--xdp", opt->xdp, "ingress on the XDP hook: drops before the kernel builds an "
                                   "skb; every fault but --duplicate");
  cmd->add_option("--duration", opt->duration, "stop after this long (e.g. 10s; default: until "
                                               "SIGINT/SIGTERM)");
  cmd->add_option("--seed", opt->seed, "seed of every random choice")->capture_default_str();

  auto* match = cmd->add_option_group("match", "which packets the faults apply to");
  match->add_option("--src", opt->src, "source prefix (IPv4 or IPv6)");
  match->add_option("--dst", opt->dst, "destination prefix");
  match->add_option("--proto", opt->proto, "udp, tcp, icmp, icmpv6 or a number");
  match->add_option("--sport", opt->sport, "source port or range (1000-2000)");
  match->add_option("--dport", opt->dport, "destination port or range");
  match->add_option("--dscp", opt->dscp, "DSCP values")->delimiter(',');
  match->add_option("--ecn-match", opt->ecn, "ECN values (0-3)")->delimiter(',');
  match->add_option("--opcode", opt->opcode,
                    "RoCEv2 BTH opcodes: numbers, ranges, send, write, read, ack, cnp");
  match->add_option("--qp", opt->qp, "RoCEv2 destination QP or range");
  match->add_option("--psn-range", opt->psn_range, "RoCEv2 PSN range (e.g. 1000-2000)");
  match->add_option("--window", opt->window,
                    "act only from START to END after the start (2s,2.2s or 2s+200ms)");

  auto* faults = cmd->add_option_group("faults", "what to do (several make several rules)");
  faults->add_option("--loss", opt->loss, "drop with this probability (1% or 0.01)");
  faults->add_option("--gilbert", opt->gilbert, "Gilbert-Elliott loss: p=..,r=..[,h=..][,k=..]");
  faults->add_option("--burst", opt->burst,
                     "4-state Markov burst loss: p13=..[,p31=..][,p32=..][,p23=..][,p14=..]");
  faults->add_option("--drop-psn", opt->drop_psn, "drop RoCEv2 packets with these PSNs (1,5,9-12)");
  faults->add_option("--every-nth", opt->every_nth, "drop every Nth matching packet");
  faults->add_flag("--blackhole", opt->blackhole, "drop every matching packet (with --window)");
  faults->add_option("--corrupt", opt->corrupt, "flip a payload byte with this probability");
  faults->add_flag("--silent", opt->silent,
                   "with --corrupt: fix the UDP checksum so only the RoCE ICRC is wrong");
  faults->add_option("--duplicate", opt->duplicate, "send a copy with this probability");
  faults->add_option("--ecn", opt->ecn_mark, "set ECN to CE with this probability");
  faults->add_option("--police", opt->police, "drop beyond a token bucket: RATE,BURST "
                                              "(10gbit,64k)");

  cmd->add_option("--allow-tcp", opt->allow_tcp, "TCP ports that always pass")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--allow-udp", opt->allow_udp, "UDP ports that always pass")->delimiter(',');
  cmd->add_option("--allow-prefix", opt->allow_prefix, "prefixes that always pass (either end)");
  cmd->add_option("--lease", opt->lease, "faults go inert this long after the last renewal")
      ->capture_default_str();
  add_pfc_storm_options(cmd, opt->storm);
  cmd->add_option("--events", opt->events, "write one JSON line per action to this file");
  cmd->add_flag("--json", opt->json, "print the counters as JSON");
  add_link_fault_options(cmd, opt->link);
  cmd->callback([opt] { run_inject(*opt); });
}

}  // namespace collide::cli
