#include "orchestrator/run/real_host_placement.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace collide::orchestrator {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// RoCEv2 headers inside the IP MTU: IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4.
constexpr uint32_t kRoceHeaderBytes = 60;

}  // namespace

Result<v1::HostDescription> describe_agent(AgentHandle& a, const std::vector<std::string>& interfaces) {
  v1::AgentRequest ask;
  for (const std::string& i : interfaces) ask.mutable_describe()->add_interfaces(i);
  if (!ask.has_describe()) ask.mutable_describe();
  COLLIDE_RETURN_IF_ERROR(a.channel->send(ask, 5s));
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline) {
    auto reply = a.channel->receive_message<v1::AgentReply>(100ms);
    if (!reply.ok()) return reply.status();
    if (!reply->has_value()) continue;
    if ((*reply)->has_error()) return failed_precondition((*reply)->error().message());
    if ((*reply)->has_described()) return (*reply)->described();
  }
  return deadline_exceeded("no description of the host within 10 s");
}

namespace {

// What keeps interface `i` from carrying frames of `mtu` payload bytes; "" when nothing does.
std::string unfit(const v1::InterfaceDescription& i, uint32_t mtu) {
  if (i.ipv4_size() == 0) return fmt::format("{} has no IPv4 address", i.name());
  if (i.mtu() != 0 && i.mtu() < mtu + kRoceHeaderBytes) {
    return fmt::format("{} has MTU {}, below the transport's {} + {} header bytes", i.name(), i.mtu(), mtu,
                       kRoceHeaderBytes);
  }
  return "";
}

// The interfaces a host's ranks use, in rail order: at most one per rank.
Result<std::vector<const v1::InterfaceDescription*>> rails_of(const AgentHandle& a, const v1::Scenario& s,
                                                              const v1::HostDescription& d,
                                                              uint32_t per_host, uint32_t mtu) {
  const bool named = static_cast<int>(a.index) < s.testbed().agents_size() &&
                     s.testbed().agents(static_cast<int>(a.index)).interfaces_size() > 0;
  std::vector<const v1::InterfaceDescription*> rails;
  std::vector<std::string> passed_over;
  for (const v1::InterfaceDescription& i : d.interfaces()) {
    if (rails.size() == per_host) break;
    if (const std::string why = unfit(i, mtu); !why.empty()) {
      if (named) return failed_precondition(fmt::format("{}: interface {}", a.name(), why));
      passed_over.push_back(why);
      continue;
    }
    rails.push_back(&i);
  }
  if (rails.empty()) {
    const std::string why = passed_over.empty() ? "it offers none" : fmt::format("{}", fmt::join(passed_over, "; "));
    return failed_precondition(fmt::format("{}: no interface fits: {}", a.name(), why));
  }
  return rails;
}

std::string names_of(const std::vector<const v1::InterfaceDescription*>& rails) {
  std::vector<std::string> names;
  for (const auto* i : rails) names.push_back(i->name());
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

Result<RealHostPlacement> place_on_real_hosts(const v1::Scenario& s,
                                              const std::vector<AgentHandle>& agents,
                                              const std::map<uint32_t, v1::HostDescription>& described,
                                              uint32_t per_host) {
  if (per_host == 0) return invalid_argument("testbed.ranks_per_host must be at least 1");
  RealHostPlacement p;
  p.queues_per_nic = std::max<uint32_t>(1, s.testbed().queues_per_nic());
  const uint32_t mtu = s.transport().mtu_bytes() ? s.transport().mtu_bytes() : 1024;
  const bool af_packet = s.testbed().port() == "af_packet";
  std::string first;  // the first host and its NICs, which the others must match in number
  std::map<std::string, uint32_t> rank_of_ip;
  for (const AgentHandle& a : agents) {
    auto rails = rails_of(a, s, described.at(a.index), per_host, mtu);
    if (!rails.ok()) return rails.status();
    const auto nics = static_cast<uint32_t>(rails->size());
    if (first.empty()) {
      first = fmt::format("{} uses {} ({})", a.name(), nics, names_of(*rails));
      p.nics_per_host = nics;
    } else if (nics != p.nics_per_host) {
      // Placement::uniform puts local rank i on NIC i % nics on every host alike.
      return failed_precondition(fmt::format(
          "every host must use the same number of NICs for its {} rank(s): {}, {} has {} that fit ({})",
          per_host, first, a.name(), nics, names_of(*rails)));
    }
    const std::string control_ip = a.address.substr(0, a.address.rfind(':'));
    std::vector<RealHostNic>& host_nics = p.nics_of_host[a.host];
    for (uint32_t k = 0; k < nics; ++k) {
      const v1::InterfaceDescription& i = *(*rails)[k];
      // Local ranks k, k + nics, ... run on this NIC, each on an address of its own.
      const uint32_t ranks_here = (per_host - k + nics - 1) / nics;
      if (static_cast<uint32_t>(i.ipv4_size()) < ranks_here) {
        return failed_precondition(fmt::format(
            "{}: interface {} (NIC {}) has {} IPv4 address(es) for its {} rank(s): each rank needs an "
            "address of its own; add addresses to {} or give the host more interfaces",
            a.name(), i.name(), k, i.ipv4_size(), ranks_here, i.name()));
      }
      const bool carries_control = std::find(i.ipv4().begin(), i.ipv4().end(), control_ip) != i.ipv4().end();
      if (carries_control && !af_packet) {
        // DPDK's AF_XDP driver takes every frame the interface receives, the control
        // connection's too, which would then be cut mid-run.
        return failed_precondition(fmt::format(
            "{}: its control address {} is on {}, which port af_xdp would take over entirely: "
            "reach the agent through another interface, or use testbed.port: af_packet",
            a.name(), control_ip, i.name()));
      }
      // One replay opens all of a host's NICs, so each DPDK device needs a name of its own.
      host_nics.push_back({i.name(), af_packet ? "afpacket:" + i.name()
                                               : fmt::format("dpdk:net_af_xdp{},iface={}", k, i.name())});
    }
    for (uint32_t slot = 0; slot < per_host; ++slot) {
      const v1::InterfaceDescription& i = *(*rails)[slot % nics];
      v1::RankEndpoint e;
      e.set_rank(a.host * per_host + slot);
      e.set_host(a.host);
      e.set_ipv4(i.ipv4(static_cast<int>(slot / nics)));
      if (auto [it, fresh] = rank_of_ip.emplace(e.ipv4(), e.rank()); !fresh) {
        return failed_precondition(fmt::format("ranks {} and {} would share address {} ({} of {}): give "
                                               "every rank an address of its own",
                                               it->second, e.rank(), e.ipv4(), i.name(), a.name()));
      }
      p.endpoints.push_back(e);
    }
  }
  return p;
}

}  // namespace collide::orchestrator
