#include "orchestrator/faults/armed_faults.h"

#include <net/if.h>

#include <algorithm>

#include <fmt/format.h>

#include "common/logging.h"
#include "common/netns.h"
#include "injectors/fault_injector.h"
#include "injectors/guardian.h"
#include "injectors/link_flap.h"
#include "injectors/rate_limit.h"

namespace collide::orchestrator::faults {
namespace {

using Clock = std::chrono::steady_clock;
using injectors::Direction;

uint64_t monotonic_ns(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

// Changes of links and qdiscs, which a guardian undoes if collide dies.
bool needs_undo(const v1::Fault& f) {
  return f.kind() == v1::Fault::KIND_LINK_FLAP || f.kind() == v1::Fault::KIND_RATE_LIMIT;
}

bool is_scheduled(const v1::Fault& f) { return needs_undo(f) || f.kind() == v1::Fault::KIND_PFC_STORM; }

// Attaches a loaded injector to every hook of the site, from inside each hook's namespace.
Status attach(injectors::FaultInjector& injector, const FaultSite& site, const std::string& name) {
  for (const FaultHook& hook : site.hooks) {
    // "": the caller's own namespace (a real host's agent).
    auto scope = hook.netns.empty() ? Result<std::unique_ptr<netns::Scope>>(std::unique_ptr<netns::Scope>())
                                    : netns::Scope::enter(hook.netns);
    if (!scope.ok()) return scope.status().with_context("arming fault " + name);
    const int ifindex = static_cast<int>(if_nametoindex(hook.ifname.c_str()));
    if (ifindex == 0) {
      return not_found(fmt::format("fault {}: no interface {} in {}", name, hook.ifname, hook.netns));
    }
    if (hook.xdp) {
      COLLIDE_RETURN_IF_ERROR(injector.attach_xdp(ifindex).with_context("arming fault " + name));
      continue;
    }
    auto mode = injector.attach(ifindex, hook.direction);
    if (!mode.ok()) return mode.status().with_context("arming fault " + name);
  }
  return {};
}

// A flap of a fabric link that fails as fabrics see it, in phases (link_failure.h).
bool has_phases(const v1::Fault& f) {
  return f.kind() == v1::Fault::KIND_LINK_FLAP && (f.detection_ns() != 0 || f.has_convergence_ns());
}

// A failure of a link whose end BGP's sessions see: the link lost (flap) or silent (blackhole).
bool measured_by_bgp(const v1::Fault& f) {
  return f.kind() == v1::Fault::KIND_LINK_FLAP || f.kind() == v1::Fault::KIND_BLACKHOLE;
}

// How far BGP got through a failure from `failed_at` to `returned_at`, for the run log.
std::string describe_bgp_phases(const BgpPhases& at, uint64_t failed_at, uint64_t returned_at) {
  if (!at.first_withdrawal) return "moved no route during the failure";
  const auto ms = [](uint64_t from, uint64_t to) { return static_cast<double>(to - from) / 1e6; };
  std::string text = fmt::format("withdrew the link {:.0f} ms into the failure",
                                 ms(failed_at, *at.first_withdrawal));
  text += at.converged ? fmt::format(", converged {:.0f} ms after", ms(*at.first_withdrawal, *at.converged))
                       : ", did not converge before the return";
  text += at.restored ? fmt::format(", all routes back {:.0f} ms after the return", ms(returned_at, *at.restored))
                      : ", routes not all back by the end";
  return text;
}

// The blackhole of a link failure's detection phase: every frame of the link, both ways, from the
// flap's start for detection_ns.
v1::Fault detection_blackhole(const v1::Fault& flap) {
  v1::Fault b;
  b.set_name(phase_name(flap.name(), kDetectionPhase));
  b.set_kind(v1::Fault::KIND_BLACKHOLE);
  b.set_link(flap.link());
  b.set_direction(v1::Fault::DIRECTION_BOTH);
  b.set_start_ns(flap.start_ns());
  b.set_duration_ns(flap.detection_ns());
  b.set_seed(flap.seed());
  return b;
}

}  // namespace

Result<std::unique_ptr<ArmedFaults>> arm_faults(const std::vector<const v1::Fault*>& faults,
                                                const testbed::TestbedPlan& plan,
                                                const ArmOptions& options) {
  std::unique_ptr<ArmedFaults> armed(new ArmedFaults());
  armed->guardian_ = options.guardian;
  const bool needs_guardian = std::any_of(faults.begin(), faults.end(),
                                          [](const v1::Fault* f) { return needs_undo(*f); });
  if (needs_guardian && armed->guardian_ == nullptr) {
    auto guardian = injectors::Guardian::start();
    if (!guardian.ok()) return guardian.status().with_context("starting the fault guardian");
    armed->own_guardian_ = std::move(guardian).value();
    armed->guardian_ = armed->own_guardian_.get();
  }
  // A start already gone by shortens every window by the time gone.
  std::chrono::nanoseconds shift{0};
  if (options.start_now && options.run_start && *options.run_start < Clock::now()) {
    shift = *options.run_start - Clock::now();
  }

  // A per-packet fault's rule, loaded and attached at every hook of its site (inert until armed).
  const auto load_packet_fault = [&](const v1::Fault& f, const FaultSite& site)
      -> Result<std::unique_ptr<injectors::FaultInjector>> {
    auto rule = packet_rule(f, options.repetition, shift, options.runs_seed);
    if (!rule.ok()) return rule.status();
    injectors::FaultInjectorOptions o;
    o.rules = {*rule};
    o.lease = options.lease;
    auto injector = injectors::FaultInjector::load(std::move(o));
    if (!injector.ok()) return injector.status().with_context("loading fault " + f.name());
    COLLIDE_RETURN_IF_ERROR(attach(**injector, site, f.name()));
    return injector;
  };

  for (const v1::Fault* f : faults) {
    ArmedFaults::Entry e;
    e.fault = *f;
    e.window.name = f->name();
    e.window.kind = kind_name(f->kind());
    std::vector<ArmedFaults::Entry> phases;  // a link failure's phase windows, after its own
    // Adds a phase window named after `f` (its fault a copy of `fault`); returns its entry.
    const auto add_phase = [&, entry = armed->faults_.size()](v1::Fault fault, std::string_view name,
                                                               const char* kind) {
      ArmedFaults::Entry p;
      fault.set_name(phase_name(f->name(), name));
      p.fault = std::move(fault);
      p.window.name = p.fault.name();
      p.window.kind = kind;
      phases.push_back(std::move(p));
      return entry + phases.size();
    };
    auto site = options.site_of ? options.site_of(*f) : resolve_site(plan, f->link(), f->direction());
    if (!site.ok()) return site.status().with_context("fault " + f->name());
    if (is_packet_fault(*f)) {
      auto injector = load_packet_fault(*f, *site);
      if (!injector.ok()) return injector.status();
      e.injector = std::move(injector).value();
    } else if (is_scheduled(*f)) {
      ArmedFaults::Scheduled s;
      s.fault = armed->faults_.size();
      s.site = *site;
      if (f->kind() == v1::Fault::KIND_LINK_FLAP) {
        // Read now, so that the flap itself is one `ip link set down` at its start time. It holds
        // the testbed's permanent neighbour entries too: the host NICs answer no ARP.
        auto snapshot = injectors::take_snapshot(site->leaf_netns, site->leaf_ifname);
        if (!snapshot.ok()) return snapshot.status().with_context("fault " + f->name());
        s.snapshot = std::move(snapshot).value();
      }
      if (f->kind() == v1::Fault::KIND_PFC_STORM) {
        auto storm = storm_plan(*f, *site);
        if (!storm.ok()) return storm.status();
        s.storm_plan = std::move(storm).value();
      }
      if (has_phases(*f)) {
        if (site->host_link) {
          return invalid_argument(fmt::format("fault {}: the phases of a link failure belong to a fabric link",
                                              f->name()));
        }
        ArmedFaults::Scheduled::Failure failure;
        failure.spine_netns = site->peer_netns;
        failure.converged_routes = converged_routes(plan, *site);
        if (f->detection_ns() != 0) {
          const v1::Fault blackhole = detection_blackhole(*f);
          auto both_ways = resolve_site(plan, f->link(), v1::Fault::DIRECTION_BOTH);
          if (!both_ways.ok()) return both_ways.status().with_context("fault " + f->name());
          auto injector = load_packet_fault(blackhole, *both_ways);
          if (!injector.ok()) return injector.status();
          failure.detection_entry = add_phase(blackhole, kDetectionPhase, "link-failure-detection");
          phases.back().injector = std::move(injector).value();
        }
        failure.convergence_entry = add_phase(*f, kConvergencePhase, "link-failure-convergence");
        if (f->has_convergence_ns()) failure.converged_entry = add_phase(*f, kConvergedPhase, "link-failure-converged");
        s.failure = std::move(failure);
      }
      armed->scheduled_.push_back(std::move(s));
    } else if (!is_replayer_fault(*f)) {
      return invalid_argument(fmt::format("fault {}: unknown kind", f->name()));
    }
    if (plan.bgp && !site->host_link && measured_by_bgp(*f)) {
      // Its phases are BFD's and BGP's: windows timed from the leaves' routes when disarmed.
      ArmedFaults::BgpFailure b;
      b.fault = armed->faults_.size();
      b.whole = expected_bgp_table(plan);
      b.without_link = expected_bgp_table(plan, site->leaf_netns, site->peer_netns);
      b.detection = add_phase(*f, kDetectionPhase, "bgp-detection");
      b.convergence = add_phase(*f, kConvergencePhase, "bgp-convergence");
      b.restoration = add_phase(*f, kReturnPhase, "bgp-return");
      armed->bgp_failures_.push_back(std::move(b));
    }
    armed->faults_.push_back(std::move(e));
    for (ArmedFaults::Entry& p : phases) armed->faults_.push_back(std::move(p));
  }
  if (!armed->bgp_failures_.empty()) armed->bgp_watch_ = BgpRouteWatch::start(plan);

  if (options.start_now) COLLIDE_RETURN_IF_ERROR(armed->start(options.run_start));
  return armed;
}

Status ArmedFaults::start(std::optional<Clock::time_point> run_start) {
  if (started_) return failed_precondition("the faults were started already");
  if (disarmed_) return failed_precondition("the faults were disarmed");
  started_ = true;
  if (run_start && *run_start > Clock::now()) std::this_thread::sleep_until(*run_start);
  run_start_ = run_start.value_or(Clock::now());
  const uint64_t start_ns = monotonic_ns(run_start_);
  for (Entry& e : faults_) {
    if (e.injector) {
      COLLIDE_RETURN_IF_ERROR(e.injector->arm().with_context("arming fault " + e.fault.name()));
      // The window the kernel enforces, as the rule says it.
      const injectors::FaultRule& rule = e.injector->rules().front();
      e.window.start_ns = e.injector->armed_at_ns() + static_cast<uint64_t>(rule.window.start.count());
      if (rule.window.end.count() != 0) {
        e.window.end_ns = e.injector->armed_at_ns() + static_cast<uint64_t>(rule.window.end.count());
      }
    } else if (is_replayer_fault(e.fault)) {
      // Played by the replayer from its own start, which follows this one within milliseconds.
      e.window.start_ns = start_ns + e.fault.start_ns();
      if (e.fault.duration_ns() != 0) e.window.end_ns = e.window.start_ns + e.fault.duration_ns();
    }
  }
  // A link failure begins with its detection phase, before the link goes down.
  for (const Scheduled& s : scheduled_) {
    if (s.failure && s.failure->detection_entry) {
      faults_[s.fault].window.start_ns = faults_[*s.failure->detection_entry].window.start_ns;
    }
  }
  if (!scheduled_.empty()) scheduler_ = std::thread([this] { run_schedule(); });
  return {};
}

Status ArmedFaults::begin(Scheduled& s) {
  const v1::Fault& f = faults_[s.fault].fault;
  if (s.storm_plan) {
    s.storm = RunningStorm::start(*s.storm_plan);
    return {};
  }
  if (f.kind() == v1::Fault::KIND_LINK_FLAP) {
    // A link failure's loss after detection is what its spine drops from here on.
    std::optional<uint64_t> no_routes;
    if (s.failure) no_routes = spine_no_routes(*s.failure);
    auto down = injectors::LinkDown::take_down(*guardian_, *s.snapshot);
    if (!down.ok()) return down.status().with_context("flapping " + f.link());
    s.down = std::move(down).value();
    if (s.failure) {
      std::lock_guard lock(mutex_);
      s.failure->down_at = Clock::now();
      s.failure->no_routes_at = no_routes;
      s.failure->phase_entry = s.failure->convergence_entry;
      faults_[s.failure->phase_entry].window.start_ns = injectors::FaultInjector::monotonic_ns();
    }
    return {};
  }
  injectors::RateLimitSpec spec;
  spec.rate_bps = static_cast<uint64_t>(f.rate_gbps() * 1e9);
  const bool to_host = f.direction() != v1::Fault::DIRECTION_FROM_HOST;
  const bool from_host = f.direction() != v1::Fault::DIRECTION_TO_HOST;
  // Each direction shaped where frames leave a port if they can be: no ifb needed there.
  struct Where {
    std::string netns, ifname;
    Direction direction;
  };
  std::vector<Where> where;
  if (s.site.own_nic) {
    // The host's own NIC: frames to the host arrive (ingress, through an ifb), frames from it leave.
    if (to_host) where.push_back({s.site.leaf_netns, s.site.leaf_ifname, Direction::kIngress});
    if (from_host) where.push_back({s.site.leaf_netns, s.site.leaf_ifname, Direction::kEgress});
  } else if (s.site.host_link) {
    if (to_host) where.push_back({s.site.leaf_netns, s.site.leaf_ifname, Direction::kEgress});
    if (from_host) where.push_back({s.site.leaf_netns, s.site.leaf_ifname, Direction::kIngress});
  } else {
    if (to_host) where.push_back({s.site.peer_netns, s.site.peer_ifname, Direction::kEgress});
    if (from_host) where.push_back({s.site.leaf_netns, s.site.leaf_ifname, Direction::kEgress});
  }
  for (const Where& w : where) {
    spec.direction = w.direction;
    auto limit = injectors::RateLimit::apply(*guardian_, w.netns, w.ifname, spec);
    if (!limit.ok()) return limit.status().with_context("rate-limiting " + f.link());
    s.limits.push_back(std::move(limit).value());
  }
  return {};
}

Status ArmedFaults::converge(Scheduled& s) {
  auto routes = ConvergedRoutes::install(*guardian_, s.failure->converged_routes, faults_[s.fault].fault.name());
  if (!routes.ok()) return routes.status();
  s.failure->routes = std::move(routes).value();
  next_phase(*s.failure, s.failure->converged_entry);
  return {};
}

std::optional<uint64_t> ArmedFaults::spine_no_routes(const Scheduled::Failure& f) {
  auto count = read_in_no_routes(f.spine_netns);
  if (!count.ok()) {
    logging::get("faults")->warn("a link failure's loss is unknown: {}", count.status().message());
    return std::nullopt;
  }
  return *count;
}

void ArmedFaults::next_phase(Scheduled::Failure& f, std::optional<size_t> next) {
  const std::optional<uint64_t> count = spine_no_routes(f);
  const uint64_t now = injectors::FaultInjector::monotonic_ns();
  std::lock_guard lock(mutex_);
  report::FaultWindow& w = faults_[f.phase_entry].window;
  w.end_ns = now;
  if (count && f.no_routes_at) {
    w.packets_matched = w.packets_acted = *count >= *f.no_routes_at ? *count - *f.no_routes_at : 0;
  }
  f.no_routes_at = count;
  if (next) {
    f.phase_entry = *next;
    faults_[*next].window.start_ns = now;
  }
}

void ArmedFaults::end(Scheduled& s) {
  if (s.failure && s.down) next_phase(*s.failure, std::nullopt);
  if (s.down) {
    s.down->bring_up();
    s.down.reset();
    // The spine routes to the leaf again: the other leaves' routes around it go.
    if (s.failure) s.failure->routes.reset();
  }
  for (auto& limit : s.limits) limit->remove();
  s.limits.clear();
  if (s.storm) {
    auto sent = s.storm->stop();
    s.storm.reset();
    std::lock_guard lock(mutex_);
    if (!sent.ok()) {
      logging::get("faults")->error("{}", sent.status().message());
      if (error_.ok()) error_ = sent.status();
      return;
    }
    report::FaultWindow& w = faults_[s.fault].window;
    // Frames due by the storm's schedule, and those that left.
    w.packets_matched = sent->frames_sent + sent->frames_failed + sent->frames_skipped;
    w.packets_acted = sent->frames_sent;
  }
}

void ArmedFaults::run_schedule() {
  enum class Step { kBegin, kConverge, kEnd };
  struct Event {
    Clock::time_point at;
    size_t index;
    Step step;
  };
  std::vector<Event> events;
  for (size_t i = 0; i < scheduled_.size(); ++i) {
    const Scheduled& s = scheduled_[i];
    const v1::Fault& f = faults_[s.fault].fault;
    const auto start_at = run_start_ + std::chrono::nanoseconds(f.start_ns());
    const auto end_at = start_at + std::chrono::nanoseconds(f.duration_ns());
    // A link failure goes down once detected; its routing converges within the flap, or not.
    const auto begin_at = start_at + std::chrono::nanoseconds(f.detection_ns());
    events.push_back({begin_at, i, Step::kBegin});
    if (s.failure && f.has_convergence_ns()) {
      const auto converge_at = begin_at + std::chrono::nanoseconds(f.convergence_ns());
      if (f.duration_ns() == 0 || converge_at < end_at) events.push_back({converge_at, i, Step::kConverge});
    }
    if (f.duration_ns() != 0) events.push_back({end_at, i, Step::kEnd});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.at < b.at; });
  for (const Event& ev : events) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, ev.at, [this] { return stopping_; })) return;
    }
    Scheduled& s = scheduled_[ev.index];
    report::FaultWindow& w = faults_[s.fault].window;
    if (ev.step == Step::kBegin) {
      Status st = begin(s);
      std::lock_guard lock(mutex_);
      if (!st.ok()) {
        logging::get("faults")->error("{}", st.message());
        if (error_.ok()) error_ = st;
        s.done = true;
        continue;
      }
      // A failure detected late began with its detection (start()).
      if (!(s.failure && s.failure->detection_entry)) w.start_ns = injectors::FaultInjector::monotonic_ns();
    } else if (ev.step == Step::kConverge) {
      if (s.done || !s.down) continue;
      // Routing converges convergence_ns after the link really went down, however late that was.
      {
        std::unique_lock lock(mutex_);
        const auto due = s.failure->down_at + std::chrono::nanoseconds(faults_[s.fault].fault.convergence_ns());
        if (wake_.wait_until(lock, due, [this] { return stopping_; })) return;
      }
      Status st = converge(s);
      if (!st.ok()) {
        std::lock_guard lock(mutex_);
        logging::get("faults")->error("{}", st.message());
        if (error_.ok()) error_ = st;
      }
    } else if (!s.done) {
      end(s);
      std::lock_guard lock(mutex_);
      w.end_ns = injectors::FaultInjector::monotonic_ns();
      s.done = true;
    }
  }
}

void ArmedFaults::read_counters() {
  for (Entry& e : faults_) {
    if (!e.injector) continue;
    auto counters = e.injector->counters();
    if (!counters.ok()) continue;
    uint64_t matched = 0, acted = 0;
    for (const auto& c : *counters) {
      matched += c.matched;
      acted += c.acted;
    }
    std::lock_guard lock(mutex_);
    e.window.packets_matched = matched;
    e.window.packets_acted = acted;
  }
}

void ArmedFaults::disarm() {
  if (disarmed_) return;
  disarmed_ = true;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
  const uint64_t now = injectors::FaultInjector::monotonic_ns();
  for (Scheduled& s : scheduled_) {
    if (s.done || (!s.down && s.limits.empty() && !s.storm)) continue;
    end(s);
    faults_[s.fault].window.end_ns = injectors::FaultInjector::monotonic_ns();
  }
  read_counters();
  for (Entry& e : faults_) {
    if (e.injector) {
      (void)e.injector->disarm();
      e.injector.reset();  // detaches
    }
    if (e.window.start_ns > now) {
      e.window.start_ns = e.window.end_ns = 0;  // the run ended before the window began
    } else if (e.window.start_ns != 0 && (e.window.end_ns == 0 || e.window.end_ns > now)) {
      e.window.end_ns = now;  // open, or cut short by the end of the run
    }
  }
  if (bgp_watch_) {
    measure_bgp_phases(bgp_watch_->stop(), /*final=*/true);
    bgp_watch_.reset();
  }
}

void ArmedFaults::measure_bgp_phases(const std::vector<BgpObservation>& seen, bool final) {
  std::lock_guard lock(mutex_);
  for (const BgpFailure& b : bgp_failures_) {
    const report::FaultWindow& failure = faults_[b.fault].window;
    if (failure.start_ns == 0) continue;  // it never began
    const BgpPhases at = bgp_phases(seen, b.whole, b.without_link, failure.start_ns, failure.end_ns);
    // A phase that did not end (no route moved, or the run ended first) has no window.
    const auto window = [&](size_t entry, std::optional<uint64_t> from, std::optional<uint64_t> to) {
      if (!from || !to) return;
      faults_[entry].window.start_ns = *from;
      faults_[entry].window.end_ns = *to;
    };
    window(b.detection, failure.start_ns, at.first_withdrawal);
    window(b.convergence, at.first_withdrawal, at.converged);
    window(b.restoration, failure.end_ns != 0 ? std::optional(failure.end_ns) : std::nullopt, at.restored);
    if (final) {
      logging::get("faults")->info("{}: BGP {}", faults_[b.fault].fault.name(),
                                   describe_bgp_phases(at, failure.start_ns, failure.end_ns));
    }
  }
}

std::vector<report::FaultWindow> ArmedFaults::ground_truth() {
  if (!disarmed_) {
    read_counters();
    // The routes' phases as far as they went (a run's results are taken before it is disarmed).
    if (bgp_watch_) measure_bgp_phases(bgp_watch_->seen(), /*final=*/false);
  }
  std::lock_guard lock(mutex_);
  std::vector<report::FaultWindow> out;
  for (const Entry& e : faults_) out.push_back(e.window);
  return out;
}

Status ArmedFaults::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

ArmedFaults::~ArmedFaults() { disarm(); }

}  // namespace collide::orchestrator::faults
