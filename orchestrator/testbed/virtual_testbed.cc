#include "orchestrator/testbed/virtual_testbed.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/logging.h"
#include "common/process.h"
#include "orchestrator/testbed/frr_daemons.h"
#include "orchestrator/testbed/ip_batch.h"
#include "orchestrator/testbed/testbed_owner.h"

namespace collide::orchestrator::testbed {
namespace {

using process::run_checked;
using process::run_command;

// How long a BGP fabric has to hold every route (BFD up, sessions established, updates through):
// seconds here, so this only catches a fabric that will not converge.
constexpr auto kBgpConvergeTimeout = std::chrono::seconds(60);

// A switch's namespace ("<name>-leaf0", "-spine1", "-super0"), where FRR's daemons may run: a
// testbed's removal ends what runs there (a namespace going does not end its processes).
bool is_switch_namespace(const std::string& ns) {
  const auto of = namespace_of_testbed(ns);
  return of && of->role != Role::kHost;
}

// Gives the switch its own multipath hash key; false when this kernel has no such setting.
bool set_hash_seed(const PlannedNamespace& ns) {
  auto set = run_command({"ip", "netns", "exec", ns.name, "sysctl", "-qw",
                          fmt::format("net.ipv4.fib_multipath_hash_seed={}", ns.hash_seed)});
  return set.ok() && set->exit_code == 0;
}

}  // namespace

Result<std::unique_ptr<VirtualTestbed>> VirtualTestbed::create(TestbedPlan plan) {
  std::unique_ptr<VirtualTestbed> tb(new VirtualTestbed(std::move(plan)));
  if (Status s = tb->build(); !s.ok()) return s;  // the destructor removes what was made
  return tb;
}

Status VirtualTestbed::build() {
  auto log = logging::get("testbed");
  auto existing = list_testbeds();
  if (existing.ok()) {
    for (const std::string& n : *existing) {
      if (n != plan_.name) continue;
      if (owner_is_gone(n)) {
        log->warn("removing testbed {}: the run that built it ended without removing it", n);
        COLLIDE_RETURN_IF_ERROR(remove_testbed(n));
        continue;
      }
      return failed_precondition(already_exists_message(n));
    }
  }
  record_owner(plan_.name);
  for (const PlannedNamespace& ns : plan_.namespaces) {
    COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "netns", "add", ns.name}));
    created_.push_back(ns.name);
    // L4 hashing everywhere a multipath route may be: elephant flows collide on a path as on a
    // real fabric, and each QP's UDP source port picks its own.
    std::vector<std::string> args = {"ip", "netns", "exec", ns.name, "sysctl", "-qw",
                                     "net.ipv6.conf.all.disable_ipv6=1",
                                     "net.ipv6.conf.default.disable_ipv6=1",
                                     "net.ipv4.fib_multipath_hash_policy=1"};
    if (ns.role != Role::kHost) {
      // A switch stops routing through a port whose link is down (loss of signal) as a real
      // switch's FIB does; the kernel would otherwise keep a route through a veth whose peer went
      // down and drop at the port what it should count as unroutable (a link failure's loss).
      for (const char* s : {"net.ipv4.ip_forward=1",
                            "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                            "net.ipv4.conf.all.ignore_routes_with_linkdown=1",
                            "net.ipv4.conf.default.ignore_routes_with_linkdown=1"}) {
        args.push_back(s);
      }
    }
    COLLIDE_RETURN_IF_ERROR(run_checked(args));
    if (ns.hash_seed != 0 && !set_hash_seed(ns)) {
      log->warn("{}: this kernel has no net.ipv4.fib_multipath_hash_seed (Linux 6.11 and later): every switch "
                "hashes with one key, so flows polarize across the fabric's tiers",
                ns.name);
    }
  }
  const std::string mtu = std::to_string(plan_.mtu);
  std::map<std::string, std::vector<std::string>> batch;
  for (const PlannedLink& l : plan_.links) {
    COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "link", "add", l.a.ifname, "netns", l.a.netns,
                                         "address", l.a.mac, "mtu", mtu, "type", "veth", "peer",
                                         "name", l.b.ifname, "netns", l.b.netns, "address",
                                         l.b.mac, "mtu", mtu}));
    for (const LinkEnd* e : {&l.a, &l.b}) {
      batch[e->netns].push_back(fmt::format("addr add {} dev {}", e->address, e->ifname));
      batch[e->netns].push_back(fmt::format("link set {} up", e->ifname));
    }
  }
  for (const PlannedNamespace& ns : plan_.namespaces) batch[ns.name].push_back("link set lo up");
  for (const PlannedNeighbor& n : plan_.neighbors) {
    batch[n.netns].push_back(fmt::format("neigh replace {} lladdr {} dev {} nud permanent", n.ip,
                                         n.mac, n.dev));
  }
  // Routes last: their next hops must be on links that are up.
  std::map<std::string, std::vector<std::string>> routes;
  for (const PlannedRoute& r : plan_.routes) {
    if (plan_.bgp && r.fabric) continue;  // BGP's to learn
    routes[r.netns].push_back(route_replace_line(r));
  }
  for (const auto& [netns, lines] : batch) {
    COLLIDE_RETURN_IF_ERROR(ip_batch(netns, lines).with_context("configuring namespace " + netns));
  }
  for (const auto& [netns, lines] : routes) {
    COLLIDE_RETURN_IF_ERROR(ip_batch(netns, lines).with_context("configuring namespace " + netns));
  }
  for (const PlannedLink& l : plan_.links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "netns", "exec", e->netns, "ethtool", "-K",
                                           e->ifname, "tso", "off", "gso", "off", "gro", "off",
                                           "tx", "off", "rx", "off"}));
      COLLIDE_RETURN_IF_ERROR(apply_port_queue(e->netns, e->ifname, e->queue, plan_.mtu));
    }
  }
  if (plan_.bgp) {
    // Once the ports are shaped: BGP's and BFD's packets cross the links as they will in the run.
    COLLIDE_RETURN_IF_ERROR(start_frr(plan_, *plan_.bgp));
    const auto started = std::chrono::steady_clock::now();
    COLLIDE_RETURN_IF_ERROR(wait_bgp_converged(plan_, kBgpConvergeTimeout));
    log->info("testbed {}: BGP converged in {} ms (FRR in every switch; vtysh -N {}-leaf0 shows a leaf's sessions)",
              plan_.name,
              std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count(),
              plan_.name);
  }
  log->info("testbed {} up: {} namespaces, {} links", plan_.name, plan_.namespaces.size(),
            plan_.links.size());
  return {};
}

VirtualTestbed::~VirtualTestbed() {
  if (keep_) {
    record_kept(plan_.name);
    return;
  }
  if (Status s = remove(); !s.ok()) logging::get("testbed")->error("{}", s.message());
}

Status VirtualTestbed::remove() {
  // A build refused because the name was taken made nothing, and the record is the other run's.
  if (created_.empty()) return {};
  // Deleting a namespace deletes its veth ends, and with them their peers.
  std::vector<std::string> left;
  std::string why;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (is_switch_namespace(*it)) {
      if (Status ended = end_namespace_processes(*it); !ended.ok()) {
        logging::get("testbed")->warn("{}: {}", *it, ended.message());
      }
    }
    Status s = run_checked({"ip", "netns", "del", *it});
    // One already gone (removed by hand) is what removing it was for.
    if (s.ok() || !std::filesystem::exists(std::filesystem::path("/run/netns") / *it)) continue;
    left.insert(left.begin(), *it);
    if (why.empty()) why = s.message();
  }
  created_ = left;
  if (!left.empty()) {
    return unavailable(fmt::format(
        "testbed {}: could not remove namespace(s) {}: {}; the next run of this testbed sweeps "
        "them, or `collide testbed down {}` does",
        plan_.name, fmt::join(left, ", "), why, plan_.name));
  }
  forget_owner(plan_.name);
  return {};
}

Result<std::vector<std::string>> list_testbeds() {
  auto out = run_command({"ip", "netns", "list"});
  if (!out.ok()) return out.status();
  std::set<std::string> names;
  std::istringstream lines(out->output);
  for (std::string line; std::getline(lines, line);) {
    if (auto of = namespace_of_testbed(line.substr(0, line.find(' ')))) names.insert(of->testbed);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Status remove_testbed(const std::string& name) {
  auto out = run_command({"ip", "netns", "list"});
  if (!out.ok()) return out.status();
  std::istringstream lines(out->output);
  int removed = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::string ns = line.substr(0, line.find(' '));
    if (ns.rfind(name + "-", 0) == 0) {
      if (is_switch_namespace(ns)) COLLIDE_RETURN_IF_ERROR(end_namespace_processes(ns));
      COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "netns", "del", ns}));
      ++removed;
    }
  }
  forget_owner(name);
  if (removed == 0) return not_found(fmt::format("no testbed named {}", name));
  return {};
}

}  // namespace collide::orchestrator::testbed
