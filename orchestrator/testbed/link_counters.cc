#include "orchestrator/testbed/link_counters.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "orchestrator/testbed/link_names.h"

namespace collide::orchestrator::testbed {
namespace {

uint64_t since(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

report::LinkEndCounters delta(const CounterSnapshot& before, const CounterSnapshot& after,
                              const LinkEnd& end) {
  const auto find = [&](const CounterSnapshot& s) {
    report::LinkEndCounters c;
    if (auto ns = s.find(end.netns); ns != s.end()) {
      if (auto i = ns->second.find(end.ifname); i != ns->second.end()) c = i->second;
    }
    return c;
  };
  const report::LinkEndCounters b = find(before), a = find(after);
  return {since(b.tx_bytes, a.tx_bytes),     since(b.tx_packets, a.tx_packets),
          since(b.rx_bytes, a.rx_bytes),     since(b.rx_packets, a.rx_packets),
          since(b.tx_dropped, a.tx_dropped), since(b.rx_dropped, a.rx_dropped)};
}

}  // namespace

Result<std::map<std::string, report::LinkEndCounters>> parse_link_stats(const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array()) return invalid_argument("ip -s -j link: not a JSON list of interfaces");
  std::map<std::string, report::LinkEndCounters> out;
  for (const nlohmann::json& link : json) {
    const auto name = link.find("ifname");
    const auto stats = link.find("stats64");
    if (name == link.end() || !name->is_string()) return invalid_argument("ip -s -j link: an interface without ifname");
    if (stats == link.end()) {
      return invalid_argument(fmt::format("ip -s -j link: interface {} without stats64", name->get<std::string>()));
    }
    const auto number = [&](const char* dir, const char* field) -> Result<uint64_t> {
      const nlohmann::json* v = nullptr;
      if (auto d = stats->find(dir); d != stats->end()) {
        if (auto f = d->find(field); f != d->end()) v = &*f;
      }
      if (v == nullptr || !v->is_number_unsigned()) {
        return invalid_argument(fmt::format("ip -s -j link: interface {}: stats64.{}.{} missing or not a count",
                                            name->get<std::string>(), dir, field));
      }
      return v->get<uint64_t>();
    };
    report::LinkEndCounters c;
    for (auto [dir, field, into] : {std::tuple{"tx", "bytes", &c.tx_bytes}, {"tx", "packets", &c.tx_packets},
                                    {"rx", "bytes", &c.rx_bytes}, {"rx", "packets", &c.rx_packets},
                                    {"tx", "dropped", &c.tx_dropped}, {"rx", "dropped", &c.rx_dropped}}) {
      auto n = number(dir, field);
      if (!n.ok()) return n.status();
      *into = *n;
    }
    out[name->get<std::string>()] = c;
  }
  return out;
}

Result<CounterSnapshot> read_counters(const TestbedPlan& plan) {
  CounterSnapshot snapshot;
  for (const PlannedNamespace& ns : plan.namespaces) {
    auto out = process::run_command({"ip", "-n", ns.name, "-s", "-j", "link", "show"});
    if (!out.ok()) return out.status().with_context("reading the link counters of " + ns.name);
    if (out->exit_code != 0) {
      return unavailable(fmt::format("reading the link counters of {}: ip exited {}: {}", ns.name,
                                     out->exit_code, out->output));
    }
    auto parsed = parse_link_stats(out->output);
    if (!parsed.ok()) return parsed.status().with_context(ns.name);
    snapshot[ns.name] = std::move(parsed).value();
  }
  return snapshot;
}

report::FabricLink name_link(const TestbedPlan& plan, const PlannedLink& l) {
  report::FabricLink f;
  const PlannedNamespace* lower = nullptr;
  const PlannedNamespace* upper = nullptr;
  for (const PlannedNamespace& ns : plan.namespaces) {
    if (ns.name == l.a.netns) lower = &ns;
    if (ns.name == l.b.netns) upper = &ns;
  }
  if (lower == nullptr || upper == nullptr) return f;
  uint32_t nics = 1;
  for (const HostNic& n : plan.nics) nics = std::max(nics, n.nic + 1);
  f.host_link = lower->role == Role::kHost;
  if (f.host_link) {
    const auto nic = std::find_if(plan.nics.begin(), plan.nics.end(),
                                  [&](const HostNic& n) { return n.mac == l.a.mac; });
    f.lower = host_nic_name(lower->index, nic != plan.nics.end() ? nic->nic : 0);
    f.leaf = upper->index;
    f.upper = switch_name(*upper);
  } else if (lower->role == Role::kSpine) {
    f.spine_link = true;
    f.spine = lower->index;
    f.super_spine = upper->index;
    f.pod = lower->pod;
    f.lower = switch_name(*lower);
    f.upper = switch_name(*upper);
  } else {
    f.leaf = lower->index;
    f.spine = upper->index;
    f.lower = switch_name(*lower);
    f.upper = switch_name(*upper);
  }
  f.rail = f.leaf % nics;
  f.name = f.lower + "-" + f.upper;
  return f;
}

std::vector<report::FabricLink> link_traffic(const TestbedPlan& plan, const CounterSnapshot& before,
                                             const CounterSnapshot& after) {
  std::vector<report::FabricLink> out;
  for (const PlannedLink& l : plan.links) {
    report::FabricLink f = name_link(plan, l);
    if (f.name.empty()) continue;
    f.lower_end = delta(before, after, l.a);
    f.upper_end = delta(before, after, l.b);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace collide::orchestrator::testbed
