#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "orchestrator/testbed/bgp_fabric.h"
#include "orchestrator/testbed/testbed_plan.h"

// FRR's daemons (zebra, bfdd, bgpd, from Debian's frr package) running in the switch namespaces of
// a BGP fabric (bgp_fabric.h). Each switch's daemons live in FRR's path space named after its
// namespace (their -N option): sockets, configuration and logs under /var/run/frr/<netns>/, so
// `vtysh -N <netns> -c 'show bgp summary'` talks to them while the testbed is up. They run as FRR's
// own user, as the package runs them.
namespace collide::orchestrator::testbed {

// Where FRR's daemons are installed.
inline constexpr const char* kFrrDaemonDir = "/usr/lib/frr";

// What is missing for FRR's daemons on this machine (the package), or nothing.
std::optional<std::string> frr_missing();

// /var/run/frr/<netns>: one switch's daemons' sockets, configuration and logs.
std::filesystem::path frr_dir(const std::string& netns);

// Starts zebra, bfdd and bgpd in every switch namespace of `plan` with bgp_speakers' configuration.
// An error names the switch and daemon that did not start (its log's last lines with it).
Status start_frr(const TestbedPlan& plan, const BgpTimers& timers);

// The routes BGP installed in namespace `netns` now, each prefix with its number of next hops
// (parse_bgp_routes of `ip -j -4 route show proto bgp`).
Result<std::vector<std::pair<std::string, size_t>>> read_bgp_routes(const std::string& netns);

// Waits until every leaf holds bgp_converged_routes (every route over all its spines), polling the
// kernel's routes; an error after `timeout` names the routes still missing and each switch's BGP
// sessions.
Status wait_bgp_converged(const TestbedPlan& plan, std::chrono::milliseconds timeout);

// Ends every process in namespace `netns` (FRR's daemons, or whatever a killed run left there):
// SIGTERM, then SIGKILL to what is still there after a grace period; then removes frr_dir(netns).
// A namespace that is already gone has nothing to end.
Status end_namespace_processes(const std::string& netns);

}  // namespace collide::orchestrator::testbed
