#include "orchestrator/testbed/pfc_switches.h"

#include <net/if.h>
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/netns.h"
#include "common/realtime.h"
#include "orchestrator/testbed/link_counters.h"
#include "orchestrator/testbed/pause_cycle.h"
#include "orchestrator/testbed/port_feeds.h"
#include "orchestrator/testbed/queue_composition.h"
#include "orchestrator/testbed/switch_port_io.h"

namespace collide::orchestrator::testbed {
namespace {

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

struct PfcSwitches::Switch {
  struct Port {
    std::string ifname;
    int ifindex = 0;
    replayer::wire::MacAddress mac;
    PauseGate gate;
    PfcPortState state;
    QueueComposition composition;
    bool held = false;
    std::string link, end;
    size_t id = 0;  // the port's place among all the fabric's switch ports (look_for_deadlock)
    // The switch port at the link's other end (index into switches_, then ports), if a switch's.
    size_t peer_switch = SIZE_MAX, peer_port = 0;
    std::vector<uint64_t> held_from{};  // bytes of this queue by the ingress port they came in by
    bool in_cycle = false;
    uint64_t deadlocks = 0, deadlocked_ns = 0;
  };
  std::string netns;
  std::unique_ptr<SwitchPortIo> io;
  std::unique_ptr<PortFeeds> feeds;
  std::vector<Port> ports;
  std::vector<uint64_t> enqueued;  // scratch: one port's feeds, by ingress port
  std::vector<uint64_t> held;      // scratch: bytes held per ingress port
};

Result<std::unique_ptr<PfcSwitches>> PfcSwitches::start(const TestbedPlan& plan, const ResolvedPfc& pfc) {
  std::unique_ptr<PfcSwitches> out(new PfcSwitches());
  out->pfc_ = pfc;
  std::set<std::string> switch_names;
  for (const PlannedNamespace& ns : plan.namespaces) {
    if (ns.role != Role::kHost) switch_names.insert(ns.name);
  }
  std::map<std::string, size_t> by_name;
  for (const std::string& name : switch_names) {
    by_name[name] = out->switches_.size();
    out->switches_.push_back(std::make_unique<Switch>());
    out->switches_.back()->netns = name;
  }
  for (const PlannedLink& l : plan.links) {
    const report::FabricLink named = name_link(plan, l);
    std::vector<std::pair<size_t, size_t>> ends;  // (switch, port) of each end that is a switch's
    for (const auto& [end, end_name] : {std::pair{&l.a, named.lower}, std::pair{&l.b, named.upper}}) {
      auto found = by_name.find(end->netns);
      if (found == by_name.end()) continue;
      Switch* sw = out->switches_[found->second].get();
      ends.emplace_back(found->second, sw->ports.size());
      if (end->queue.gbps <= 0) {
        return failed_precondition(fmt::format("lossless mode needs a shaped queue on every switch port, and "
                                               "{} has none",
                                               named.name));
      }
      auto mac = replayer::wire::MacAddress::parse(end->mac);
      if (!mac.ok()) return mac.status().with_context(end->netns + "/" + end->ifname);
      PfcPortConfig config;
      config.gbps = end->queue.gbps;
      config.quanta = static_cast<uint16_t>(pfc.quanta);
      config.xoff_bytes = pfc.xoff_bytes;
      config.xon_bytes = pfc.xon_bytes;
      config.watchdog_detect_ns = pfc.watchdog_detect.count();
      config.watchdog_restore_ns = pfc.watchdog_restore.count();
      const PauseGate gate = pause_gate(end->queue, plan.mtu);
      sw->ports.push_back(Switch::Port{.ifname = end->ifname,
                                       .mac = *mac,
                                       .gate = gate,
                                       .state = PfcPortState(config),
                                       .composition = QueueComposition(0, gate.shape.limit_bytes),
                                       .link = named.name,
                                       .end = end_name});
    }
    if (ends.size() == 2) {
      for (size_t e = 0; e < 2; ++e) {
        Switch::Port& port = out->switches_[ends[e].first]->ports[ends[e].second];
        port.peer_switch = ends[1 - e].first;
        port.peer_port = ends[1 - e].second;
      }
    }
  }
  // Sockets and programs are made inside each switch's namespace and stay there.
  for (auto& s : out->switches_) {
    auto scope = netns::Scope::enter(s->netns);
    if (!scope.ok()) return scope.status();
    std::vector<int> ifindexes;
    for (Switch::Port& p : s->ports) {
      p.ifindex = static_cast<int>(if_nametoindex(p.ifname.c_str()));
      if (p.ifindex == 0) return not_found(fmt::format("{} has no port {}", s->netns, p.ifname));
      p.composition = QueueComposition(s->ports.size(), p.gate.shape.limit_bytes);
      p.id = out->port_count_++;
      ifindexes.push_back(p.ifindex);
    }
    auto io = SwitchPortIo::open();
    if (!io.ok()) return io.status().with_context(s->netns);
    s->io = std::move(io).value();
    // One counter per switch, of the frames that queue behind its ports' gates.
    const TosMatch tos = s->ports.empty() ? TosMatch{} : s->ports.front().gate.tos;
    for (const Switch::Port& p : s->ports) {
      if (p.gate.tos.mask != tos.mask || p.gate.tos.value != tos.value) {
        return failed_precondition(fmt::format("{}: its ports do not all queue the same priority apart", s->netns));
      }
    }
    auto feeds = PortFeeds::attach(ifindexes, tos);
    if (!feeds.ok()) return feeds.status().with_context(s->netns);
    s->feeds = std::move(feeds).value();
    s->enqueued.assign(s->ports.size(), 0);
    s->held.assign(s->ports.size(), 0);
  }
  out->t0_ns_ = monotonic_ns();
  out->thread_ = std::thread([raw = out.get()] {
    // Its polls are the switches' reaction time and its watchdog's clock: on time beside the
    // replays' polling engines, as a switch's own chip would be.
    realtime::lowest_realtime_priority("PFC switches");
    raw->run();
  });
  return out;
}

PfcSwitches::~PfcSwitches() {
  if (thread_.joinable()) {
    stop_ = true;
    thread_.join();
    (void)release_all();
  }
}

Status PfcSwitches::look_at_pauses(Switch& s, int64_t now) {
  auto pauses = s.io->receive_pauses();
  if (!pauses.ok()) return pauses.status();
  for (const ReceivedPause& r : *pauses) {
    if (!r.frame.pauses(static_cast<uint8_t>(pfc_.priority))) continue;
    for (Switch::Port& p : s.ports) {
      if (p.ifindex == r.ifindex) p.state.on_peer_pause(r.frame.quanta[pfc_.priority], r.at_ns);
    }
  }
  for (Switch::Port& p : s.ports) {
    const bool hold = p.state.should_hold(now);
    if (hold == p.held) continue;
    // A hold is taken once per pause, not per refreshing frame: each change lets a frame go.
    Status done = hold ? s.io->hold(p.ifindex, p.gate) : s.io->release(p.ifindex, p.gate);
    if (!done.ok()) return done.with_context(s.netns + "/" + p.ifname);
    p.held = hold;
  }
  return {};
}

Status PfcSwitches::poll(Switch& s, int64_t now) {
  auto stats = s.io->qdisc_stats();
  if (!stats.ok()) return stats.status().with_context(s.netns);
  std::fill(s.held.begin(), s.held.end(), 0);
  for (Switch::Port& egress : s.ports) {
    // The lossless queue's backlog: what waits behind the gate.
    auto it = std::find_if(stats->begin(), stats->end(), [&](const QdiscCounters& q) {
      return q.ifindex == egress.ifindex && q.handle == egress.gate.handle;
    });
    const uint64_t backlog = it == stats->end() ? 0 : it->backlog_bytes;
    for (size_t i = 0; i < s.ports.size(); ++i) s.enqueued[i] = s.feeds->bytes(egress.ifindex, s.ports[i].ifindex);
    egress.composition.record(s.enqueued);
    egress.held_from = egress.composition.held_by_ingress(backlog);
    for (size_t i = 0; i < egress.held_from.size(); ++i) s.held[i] += egress.held_from[i];
  }
  for (size_t i = 0; i < s.ports.size(); ++i) {
    Switch::Port& ingress = s.ports[i];
    const PfcPortState::Send send = ingress.state.on_held_bytes(s.held[i], now);
    if (send == PfcPortState::Send::kNothing) continue;
    replayer::wire::PauseFrame frame;
    frame.source = ingress.mac;
    frame.enabled = static_cast<uint8_t>(1u << pfc_.priority);
    frame.quanta[pfc_.priority] = send == PfcPortState::Send::kPause ? static_cast<uint16_t>(pfc_.quanta) : 0;
    if (Status sent = s.io->send_pfc(ingress.ifindex, frame); !sent.ok()) {
      return sent.with_context(s.netns + "/" + ingress.ifname);
    }
  }
  return {};
}

void PfcSwitches::run() {
  std::vector<pollfd> fds;
  for (auto& s : switches_) fds.push_back({s->io->pause_fd(), POLLIN, 0});
  const int64_t period = std::chrono::duration_cast<std::chrono::nanoseconds>(pfc_.poll).count();
  int64_t next_poll = monotonic_ns();
  while (!stop_) {
    int64_t now = monotonic_ns();
    const int64_t wait = std::max<int64_t>(0, next_poll - now);
    timespec timeout{static_cast<time_t>(wait / 1'000'000'000), static_cast<long>(wait % 1'000'000'000)};
    if (ppoll(fds.data(), fds.size(), &timeout, nullptr) < 0 && errno != EINTR) {
      failure_ = internal_error(fmt::format("waiting for pause frames: {}", strerror(errno)));
      break;
    }
    now = monotonic_ns();
    const bool poll_due = now >= next_poll;
    for (auto& s : switches_) {
      Status done = look_at_pauses(*s, now);
      if (done.ok() && poll_due) done = poll(*s, now);
      if (!done.ok()) {
        failure_ = done;
        stop_ = true;
        break;
      }
    }
    if (poll_due && !stop_) look_for_deadlock(now);
    // A late loop does not try to catch up: the next look is one period from now.
    if (poll_due) next_poll = std::max(next_poll + period, now + period / 2);
  }
}

void PfcSwitches::look_for_deadlock(int64_t now) {
  // Every switch queue of the fabric as one graph: a held queue waits on the queues of its peer
  // switch that hold bytes which came in through the peer's port facing it (what the peer's
  // pauses protect).
  std::vector<PausedQueue> queues(port_count_);
  for (auto& s : switches_) {
    for (const Switch::Port& p : s->ports) {
      PausedQueue& q = queues[p.id];
      q.held = p.held;
      if (!p.held || p.peer_switch == SIZE_MAX) continue;
      for (const Switch::Port& peer_queue : switches_[p.peer_switch]->ports) {
        const std::vector<uint64_t>& from = peer_queue.held_from;
        if (p.peer_port < from.size() && from[p.peer_port] > 0) q.waits_on.push_back(peer_queue.id);
      }
    }
  }
  std::vector<bool> in_cycle(port_count_, false);
  for (size_t id : find_pause_cycle(queues)) in_cycle[id] = true;
  const uint64_t since_last = last_deadlock_look_ns_ == 0 ? 0 : static_cast<uint64_t>(now - last_deadlock_look_ns_);
  for (auto& s : switches_) {
    for (Switch::Port& p : s->ports) {
      const bool now_in = in_cycle[p.id];
      if (now_in && !p.in_cycle) ++p.deadlocks;
      if (now_in && p.in_cycle) p.deadlocked_ns += since_last;
      p.in_cycle = now_in;
    }
  }
  last_deadlock_look_ns_ = now;
}

Status PfcSwitches::release_all() {
  Status first;
  for (auto& s : switches_) {
    for (Switch::Port& p : s->ports) {
      if (!p.held) continue;
      if (Status done = s->io->release(p.ifindex, p.gate); !done.ok() && first.ok()) {
        first = done.with_context(s->netns + "/" + p.ifname);
      }
      p.held = false;
    }
  }
  return first;
}

Result<std::vector<PfcPortResult>> PfcSwitches::finish() {
  if (thread_.joinable()) {
    stop_ = true;
    thread_.join();
  }
  const int64_t now = monotonic_ns();
  std::vector<PfcPortResult> out;
  for (auto& s : switches_) {
    for (Switch::Port& p : s->ports) {
      p.state.should_hold(now);  // counts held time to the end
      PfcPortResult r{p.link, p.end, p.state.counters()};
      r.counters.deadlocks = p.deadlocks;
      r.counters.deadlocked_ns = p.deadlocked_ns;
      for (WatchdogEvent& e : r.counters.watchdog_events) {
        e.held_since_ns -= t0_ns_;
        e.detected_ns -= t0_ns_;
        if (e.restored_ns != 0) e.restored_ns -= t0_ns_;
      }
      out.push_back(std::move(r));
    }
  }
  Status released = release_all();
  if (!failure_.ok()) return failure_.with_context("lossless mode stopped during the run");
  if (!released.ok()) return released;
  return out;
}

}  // namespace collide::orchestrator::testbed
