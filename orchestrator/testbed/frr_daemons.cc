#include "orchestrator/testbed/frr_daemons.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/parse_number.h"
#include "common/process.h"

namespace collide::orchestrator::testbed {
namespace {

using namespace std::chrono_literals;

constexpr const char* kFrrUser = "frr";
// zebra first: bfdd and bgpd register with it (they keep trying until it answers).
constexpr const char* kDaemons[] = {"zebra", "bfdd", "bgpd"};
// How long a daemon has to end on SIGTERM before it is killed.
constexpr auto kStopGrace = 2s;
constexpr auto kConvergePoll = 100ms;
// How many missing routes an error lists before it says how many more there are.
constexpr size_t kMissingShown = 6;

Status write_file(const std::filesystem::path& path, const std::string& text, uid_t uid, gid_t gid) {
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out.flush()) return internal_error(fmt::format("cannot write {}", path.string()));
  }
  if (chown(path.c_str(), uid, gid) != 0) return internal_error(fmt::format("cannot give {} to {}", path.string(), kFrrUser));
  return {};
}

// The last `n` lines of a daemon's log, for an error that says why it is not doing its job.
std::string log_tail(const std::filesystem::path& log, size_t n) {
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const size_t from = lines.size() > n ? lines.size() - n : 0;
  std::string out;
  for (size_t i = from; i < lines.size(); ++i) out += "\n  " + lines[i];
  return out.empty() ? " (its log is empty)" : out;
}

// The processes whose network namespace is `netns`.
Result<std::vector<pid_t>> namespace_pids(const std::string& netns) {
  auto out = process::run_command({"ip", "netns", "pids", netns});
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) return unavailable(fmt::format("ip netns pids {}: {}", netns, out->output));
  std::vector<pid_t> pids;
  std::istringstream words(out->output);
  for (std::string w; words >> w;) {
    auto pid = parse_number<int32_t>(w, "pid");
    if (!pid.ok()) return pid.status();
    pids.push_back(*pid);
  }
  return pids;
}

}  // namespace

std::optional<std::string> frr_missing() {
  for (const char* d : kDaemons) {
    const auto path = std::filesystem::path(kFrrDaemonDir) / d;
    if (access(path.c_str(), X_OK) != 0) {
      return fmt::format("routing: bgp runs FRR's daemons and {} is missing (apt-get install frr)", path.string());
    }
  }
  if (getpwnam(kFrrUser) == nullptr) return "routing: bgp runs FRR's daemons as user frr, which does not exist (apt-get install frr)";
  return std::nullopt;
}

std::filesystem::path frr_dir(const std::string& netns) { return std::filesystem::path("/var/run/frr") / netns; }

Status start_frr(const TestbedPlan& plan, const BgpTimers& timers) {
  if (auto missing = frr_missing()) return failed_precondition(*missing);
  const passwd* user = getpwnam(kFrrUser);
  const uid_t uid = user->pw_uid;
  const gid_t gid = user->pw_gid;
  for (const BgpSpeaker& s : bgp_speakers(plan)) {
    const auto dir = frr_dir(s.netns);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // a killed run's
    std::filesystem::create_directories(dir, ec);
    if (ec) return internal_error(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    if (chown(dir.c_str(), uid, gid) != 0 || chown(dir.parent_path().c_str(), uid, gid) != 0) {
      return internal_error(fmt::format("cannot give {} to {}", dir.string(), kFrrUser));
    }
    COLLIDE_RETURN_IF_ERROR(write_file(dir / "zebra.conf", zebra_conf(s), uid, gid));
    COLLIDE_RETURN_IF_ERROR(write_file(dir / "bfdd.conf", bfdd_conf(s, timers), uid, gid));
    COLLIDE_RETURN_IF_ERROR(write_file(dir / "bgpd.conf", bgpd_conf(s, timers), uid, gid));
    for (const char* d : kDaemons) {
      const std::string daemon(d);
      // -d: daemonize once started; -P 0: no TCP vty (vtysh reaches it through its socket).
      Status started = process::run_checked(
          {"ip", "netns", "exec", s.netns, (std::filesystem::path(kFrrDaemonDir) / daemon).string(), "-d", "-N",
           s.netns, "-f", (dir / (daemon + ".conf")).string(), "-i", (dir / (daemon + ".pid")).string(), "--log",
           "file:" + (dir / (daemon + ".log")).string(), "-P", "0"});
      if (!started.ok()) {
        return started.with_context(
            fmt::format("starting {} on {}{}", daemon, s.name, log_tail(dir / (daemon + ".log"), 5)));
      }
    }
  }
  return {};
}

Result<std::vector<std::pair<std::string, size_t>>> read_bgp_routes(const std::string& netns) {
  auto out = process::run_command({"ip", "-n", netns, "-j", "-4", "route", "show", "proto", "bgp"});
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) return unavailable(fmt::format("ip -n {} route: {}", netns, out->output));
  auto routes = parse_bgp_routes(out->output);
  if (!routes.ok()) return routes.status().with_context(netns);
  return routes;
}

Status wait_bgp_converged(const TestbedPlan& plan, std::chrono::milliseconds timeout) {
  std::map<std::string, std::vector<ConvergedRoute>> wanted;
  for (ConvergedRoute& r : bgp_converged_routes(plan)) wanted[r.netns].push_back(std::move(r));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::string> missing;
  std::string first_missing_netns;
  for (;;) {
    missing.clear();
    first_missing_netns.clear();
    for (const auto& [netns, routes] : wanted) {
      auto held = read_bgp_routes(netns);
      if (!held.ok()) return held.status();
      std::map<std::string, size_t> hops(held->begin(), held->end());
      for (const ConvergedRoute& r : routes) {
        const auto it = hops.find(r.prefix);
        const size_t have = it == hops.end() ? 0 : it->second;
        if (have == r.next_hops) continue;
        if (first_missing_netns.empty()) first_missing_netns = netns;
        missing.push_back(fmt::format("{} {} over {} of {} spines", netns, r.prefix, have, r.next_hops));
      }
    }
    if (missing.empty()) return {};
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(kConvergePoll);
  }
  std::string listed;
  for (size_t i = 0; i < missing.size() && i < kMissingShown; ++i) listed += "\n  " + missing[i];
  if (missing.size() > kMissingShown) listed += fmt::format("\n  ... and {} more", missing.size() - kMissingShown);
  return deadline_exceeded(fmt::format("BGP did not converge within {} ms; routes not (yet) held:{}\n{}'s bgpd "
                                       "log ends:{}",
                                       timeout.count(), listed, first_missing_netns,
                                       log_tail(frr_dir(first_missing_netns) / "bgpd.log", 8)));
}

Status end_namespace_processes(const std::string& netns) {
  if (std::filesystem::exists(std::filesystem::path("/run/netns") / netns)) {
    auto pids = namespace_pids(netns);
    if (!pids.ok()) return pids.status();
    for (pid_t p : *pids) kill(p, SIGTERM);
    const auto give_up = std::chrono::steady_clock::now() + kStopGrace;
    while (!pids->empty() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(20ms);
      pids = namespace_pids(netns);
      if (!pids.ok()) return pids.status();
    }
    for (pid_t p : *pids) kill(p, SIGKILL);
  }
  std::error_code ec;
  std::filesystem::remove_all(frr_dir(netns), ec);
  return {};
}

}  // namespace collide::orchestrator::testbed
