#include "orchestrator/cli/inject_link_faults.h"

#include <signal.h>

#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "injectors/fault_rules.h"
#include "injectors/guardian.h"
#include "injectors/link_flap.h"
#include "injectors/rate_limit.h"
#include "injectors/sweep.h"
#include "orchestrator/cli/commands.h"

namespace collide::cli {

namespace inj = injectors;

class ActiveLinkFaults {
 public:
  std::unique_ptr<inj::Guardian> guardian;
  // Declared after the guardian: they go first, undoing through it.
  std::vector<std::unique_ptr<inj::RateLimit>> rate_limits;
  std::unique_ptr<inj::LinkFlapper> flapper;

  ~ActiveLinkFaults() {
    flapper.reset();
    rate_limits.clear();
  }
};

void ActiveLinkFaultsDeleter::operator()(ActiveLinkFaults* faults) const { delete faults; }

namespace {

[[noreturn]] void usage(const std::string& message) { fail("inject", kExitUsage, message); }

std::filesystem::path state_dir_of(const LinkFaultOptions& o) {
  return o.state_dir.empty() ? inj::default_state_dir() : std::filesystem::path(o.state_dir);
}

}  // namespace

void add_link_fault_options(CLI::App* cmd, LinkFaultOptions& o) {
  auto* link = cmd->add_option_group("link faults", "faults of the link itself");
  link->add_option("--flap", o.flap,
                   "take the link down for DOWN_FOR, once or every EVERY: DOWN_FOR[,EVERY] "
                   "(2s or 500ms,5s); addresses and routes are restored after each flap");
  link->add_option("--rate", o.rate,
                   "shape the device to this rate with tbf (100mbit) on --direction; ingress goes "
                   "through an ifb device");
  link->add_option("--rate-burst", o.rate_burst,
                   "token bucket of --rate (64k; default 10 ms at the rate, at least 32k)");
  link->add_flag("--sweep", o.sweep,
                 "remove what earlier collide runs left behind (qdiscs, filters, ifb devices, "
                 "links left down) on this host and in every namespace (or only --netns), then "
                 "exit");
  link->add_option("--state-dir", o.state_dir,
                   "where pending undos are recorded (default $COLLIDE_STATE_DIR or /run/collide)");
}

bool wants_link_faults(const LinkFaultOptions& o) { return !o.flap.empty() || !o.rate.empty(); }

void check_link_fault_options(const LinkFaultOptions& o) {
  if (!o.flap.empty()) {
    if (auto s = inj::parse_flap_spec(o.flap); !s.ok()) usage(s.status().message());
  }
  if (!o.rate.empty()) {
    if (auto r = inj::parse_rate(o.rate); !r.ok()) usage("--rate: " + r.status().message());
  }
  if (!o.rate_burst.empty()) {
    if (o.rate.empty()) usage("--rate-burst needs --rate");
    if (auto b = inj::parse_size(o.rate_burst); !b.ok()) {
      usage("--rate-burst: " + b.status().message());
    }
  }
}

ActiveLinkFaultsPtr start_link_faults(const LinkFaultOptions& o, const std::string& netns,
                                      const std::string& dev, const std::string& direction) {
  if (!wants_link_faults(o)) return nullptr;
  check_link_fault_options(o);
  ActiveLinkFaultsPtr faults(new ActiveLinkFaults());
  auto guardian = inj::Guardian::start({state_dir_of(o)});
  if (!guardian.ok()) fail("inject", kExitFailed, guardian.status().to_string());
  faults->guardian = std::move(guardian).value();

  std::vector<std::string> started;
  if (!o.rate.empty()) {
    inj::RateLimitSpec spec;
    spec.rate_bps = *inj::parse_rate(o.rate) * 8;
    if (!o.rate_burst.empty()) spec.burst_bytes = *inj::parse_size(o.rate_burst);
    std::vector<inj::Direction> directions;
    if (direction != "egress") directions.push_back(inj::Direction::kIngress);
    if (direction != "ingress") directions.push_back(inj::Direction::kEgress);
    for (inj::Direction d : directions) {
      spec.direction = d;
      auto limit = inj::RateLimit::apply(*faults->guardian, netns, dev, spec);
      if (!limit.ok()) fail("inject", kExitFailed, limit.status().to_string());
      started.push_back(fmt::format("rate {} {}{}", o.rate,
                                    d == inj::Direction::kIngress ? "ingress" : "egress",
                                    (*limit)->ifb().empty() ? "" : " via " + (*limit)->ifb()));
      faults->rate_limits.push_back(std::move(limit).value());
    }
  }
  if (!o.flap.empty()) {
    auto flapper = inj::LinkFlapper::start(*faults->guardian, netns, dev,
                                           *inj::parse_flap_spec(o.flap));
    if (!flapper.ok()) fail("inject", kExitFailed, flapper.status().to_string());
    faults->flapper = std::move(flapper).value();
    started.push_back("flap " + o.flap);
  }
  std::cerr << fmt::format("collide inject: link faults on {}{}: {} (guardian pid {})\n", dev,
                           netns.empty() ? "" : " in " + netns, fmt::join(started, ", "),
                           faults->guardian->guardian_pid());
  return faults;
}

void run_link_fault_sweep(const LinkFaultOptions& o, const std::string& netns) {
  inj::SweepOptions options;
  options.state_dir = state_dir_of(o);
  if (!netns.empty()) options.namespaces = std::vector<std::string>{netns};
  auto report = inj::sweep(options);
  if (!report.ok()) fail("inject", kExitFailed, report.status().to_string());
  for (const std::string& line : inj::describe(*report)) std::cout << line << "\n";
  if (!report->errors.empty()) throw CLI::RuntimeError(kExitFailed);
}

void run_link_faults_only(const LinkFaultOptions& o, const std::string& netns,
                          const std::string& dev, const std::string& direction,
                          std::chrono::nanoseconds duration) {
  // SIGINT/SIGTERM are taken synchronously; blocked before any thread starts so all inherit it.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const auto started_at = std::chrono::steady_clock::now();
  ActiveLinkFaultsPtr faults = start_link_faults(o, netns, dev, direction);
  while (true) {
    auto wait = std::chrono::nanoseconds(std::chrono::milliseconds(200));
    if (duration.count() > 0) {
      const auto left = duration - (std::chrono::steady_clock::now() - started_at);
      if (left.count() <= 0) break;
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::nanoseconds>(left));
    }
    const timespec ts{static_cast<time_t>(wait.count() / 1'000'000'000),
                      static_cast<long>(wait.count() % 1'000'000'000)};
    if (sigtimedwait(&stop_signals, nullptr, &ts) > 0) break;
    if (faults->flapper) {
      if (Status s = faults->flapper->error(); !s.ok()) {
        faults.reset();
        fail("inject", kExitFailed, s.to_string());
      }
    }
  }
  const int flaps = faults->flapper ? faults->flapper->flaps() : 0;
  faults.reset();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count();
  std::cout << fmt::format("{}{}: link faults held for {:.3f} s{}; undone\n", dev,
                           netns.empty() ? "" : " in " + netns, seconds,
                           o.flap.empty() ? "" : fmt::format(", {} flap(s) completed", flaps));
}

}  // namespace collide::cli
