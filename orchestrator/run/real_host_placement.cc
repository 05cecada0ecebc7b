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

Result<RealHostPlacement> place_on_real_hosts(const v1::Scenario& s,
                                              const std::vector<AgentHandle>& agents,
                                              const std::map<uint32_t, v1::HostDescription>& described,
                                              uint32_t per_host) {
  RealHostPlacement p;
  const uint32_t mtu = s.transport().mtu_bytes() ? s.transport().mtu_bytes() : 1024;
  if (per_host > 1) {
    // Ranks of one host talk to each other through its port; a switch does not send a frame back
    // out of the port it came in by, so they would never hear each other.
    return failed_precondition(fmt::format(
        "real hosts run one rank each so far (ranks_per_host is {}): ranks on one host would send "
        "to each other through the NIC, and the switch does not return such frames",
        per_host));
  }
  std::map<uint32_t, std::string> ip_of_rank;
  for (const AgentHandle& a : agents) {
    const v1::HostDescription& d = described.at(a.index);
    const v1::InterfaceDescription* chosen = nullptr;
    std::vector<std::string> why;
    for (const v1::InterfaceDescription& i : d.interfaces()) {
      if (static_cast<uint32_t>(i.ipv4_size()) < per_host) {
        why.push_back(fmt::format("{} has {} IPv4 address(es) for {} rank(s)", i.name(), i.ipv4_size(), per_host));
      } else if (i.mtu() != 0 && i.mtu() < mtu + kRoceHeaderBytes) {
        why.push_back(fmt::format("{} has MTU {}, below the transport's {} + {} header bytes", i.name(),
                                  i.mtu(), mtu, kRoceHeaderBytes));
      } else {
        chosen = &i;
        break;
      }
    }
    if (chosen == nullptr) {
      return failed_precondition(fmt::format("{}: no interface fits: {}", a.name(), fmt::join(why, "; ")));
    }
    const std::string control_ip = a.address.substr(0, a.address.rfind(':'));
    const bool carries_control =
        std::find(chosen->ipv4().begin(), chosen->ipv4().end(), control_ip) != chosen->ipv4().end();
    if (carries_control && s.testbed().port() != "af_packet") {
      // DPDK's AF_XDP driver takes every frame the interface receives, the control
      // connection's too, which would then be cut mid-run.
      return failed_precondition(fmt::format(
          "{}: its control address {} is on {}, which port af_xdp would take over entirely: "
          "reach the agent through another interface, or use testbed.port: af_packet",
          a.name(), control_ip, chosen->name()));
    }
    p.interface_of_host[a.host] = chosen->name();
    p.port_of_host[a.host] = s.testbed().port() == "af_packet"
                                 ? "afpacket:" + chosen->name()
                                 : "dpdk:net_af_xdp0,iface=" + chosen->name();
    for (uint32_t slot = 0; slot < per_host; ++slot) {
      v1::RankEndpoint e;
      e.set_rank(a.host * per_host + slot);
      e.set_host(a.host);
      e.set_ipv4(chosen->ipv4(static_cast<int>(slot)));
      for (const auto& [rank, ip] : ip_of_rank) {
        if (ip == e.ipv4()) {
          return failed_precondition(fmt::format("ranks {} and {} would share address {}: give the hosts "
                                                 "distinct addresses", rank, e.rank(), ip));
        }
      }
      ip_of_rank[e.rank()] = e.ipv4();
      p.endpoints.push_back(e);
    }
  }
  return p;
}

}  // namespace collide::orchestrator
