#include "orchestrator/faults/link_failure.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/netns.h"
#include "common/parse_number.h"
#include "injectors/undo_step.h"
#include "orchestrator/testbed/ip_batch.h"

namespace collide::orchestrator::faults {
namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

std::vector<testbed::PlannedRoute> converged_routes(const testbed::TestbedPlan& plan, const FaultSite& site) {
  // The failed leaf's address on the link: the spine's next hop towards the leaf's prefixes.
  std::string leaf_address;
  for (const testbed::PlannedLink& l : plan.links) {
    if (l.a.netns == site.leaf_netns && l.a.ifname == site.leaf_ifname) leaf_address = testbed::bare_address(l.a.address);
  }
  std::vector<std::string> prefixes;
  for (const testbed::PlannedRoute& r : plan.routes) {
    if (r.netns == site.peer_netns && r.via.size() == 1 && r.via[0] == leaf_address) prefixes.push_back(r.prefix);
  }
  // Every other leaf's uplinks, by leaf, in the plan's order, but the failed spine's.
  std::map<std::string, std::vector<std::string>> kept_spines;
  std::set<std::string> spines;
  for (const testbed::PlannedNamespace& ns : plan.namespaces) {
    if (ns.role == testbed::Role::kLeaf && ns.name != site.leaf_netns) kept_spines[ns.name];
    if (ns.role == testbed::Role::kSpine && ns.name != site.peer_netns) spines.insert(ns.name);
  }
  for (const testbed::PlannedLink& l : plan.links) {
    auto leaf = kept_spines.find(l.a.netns);
    if (leaf != kept_spines.end() && spines.count(l.b.netns)) leaf->second.push_back(testbed::bare_address(l.b.address));
  }
  std::vector<testbed::PlannedRoute> out;
  for (const auto& [leaf, via] : kept_spines) {
    if (via.empty()) continue;
    for (const std::string& prefix : prefixes) out.push_back({leaf, prefix, via});
  }
  return out;
}

Result<uint64_t> in_no_routes(std::string_view netstat) {
  // Two "IpExt:" lines: the field names, then their values.
  std::istringstream in{std::string(netstat)};
  std::vector<std::vector<std::string>> ip;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("IpExt:", 0) == 0) ip.push_back(words(line));
  }
  if (ip.size() < 2 || ip[0].size() != ip[1].size()) {
    return invalid_argument("/proc/net/netstat: no IpExt field names and values");
  }
  for (size_t i = 1; i < ip[0].size(); ++i) {
    if (ip[0][i] == "InNoRoutes") return parse_number<uint64_t>(ip[1][i], "IpExt InNoRoutes");
  }
  return invalid_argument("/proc/net/netstat: no IpExt InNoRoutes");
}

Result<uint64_t> read_in_no_routes(const std::string& netns) {
  auto scope = netns::Scope::enter(netns);
  if (!scope.ok()) return scope.status();
  // thread-self: /proc/net follows the process's first thread, not the namespace this one entered.
  std::ifstream in("/proc/thread-self/net/netstat");
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return unavailable("reading /proc/net/netstat in " + netns);
  return in_no_routes(text.str());
}

Result<std::unique_ptr<ConvergedRoutes>> ConvergedRoutes::install(injectors::Guardian& guardian,
                                                                  const std::vector<testbed::PlannedRoute>& routes,
                                                                  const std::string& fault) {
  std::unique_ptr<ConvergedRoutes> out(new ConvergedRoutes(guardian));
  std::map<std::string, std::vector<const testbed::PlannedRoute*>> by_leaf;
  for (const testbed::PlannedRoute& r : routes) by_leaf[r.netns].push_back(&r);
  for (const auto& [leaf, leaf_routes] : by_leaf) {
    injectors::UndoAction undo;
    undo.description = fmt::format("{}: routes converged around fault {}", leaf, fault);
    undo.netns = leaf;
    for (const testbed::PlannedRoute* r : leaf_routes) {
      undo.steps.push_back(injectors::UndoStep::delete_route(false, r->prefix));
    }
    auto id = guardian.register_undo(undo);
    if (!id.ok()) return id.status().with_context("converging routes around fault " + fault);
    out->undo_ids_.push_back(*id);
    // One `ip -batch` per leaf: the routes land together, as a converged table does.
    std::vector<std::string> lines;
    for (const testbed::PlannedRoute* r : leaf_routes) {
      lines.push_back(testbed::route_replace_line(*r));
    }
    COLLIDE_RETURN_IF_ERROR(testbed::ip_batch(leaf, lines)
                                .with_context(fmt::format("converging routes around fault {} in {}", fault, leaf)));
  }
  return out;
}

void ConvergedRoutes::withdraw() {
  for (uint64_t id : undo_ids_) guardian_.undo(id);
  undo_ids_.clear();
}

}  // namespace collide::orchestrator::faults
