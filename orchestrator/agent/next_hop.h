#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collide/agent.pb.h"
#include "common/result.h"

// The MAC a real host's frames to a peer go to: the peer itself when it is on the link, else the
// gateway of the route towards it. Frames are built by the replayer, past the kernel's routing
// and ARP, so the agent asks the kernel's tables once before the run (and makes the kernel ARP
// for the next hop when it does not know it yet).
namespace collide::orchestrator::agent {

// The next hop towards `peer` (host-order IPv4) out of `ifname`, from the text of
// /proc/net/route: the longest matching prefix on that interface (then the lowest metric); the
// gateway of a gateway route, else `peer` itself. Not found when no route leaves by `ifname`.
Result<uint32_t> next_hop_from_routes(const std::string& route_table, const std::string& ifname,
                                      uint32_t peer);

// The MAC of `ip` on `ifname` in the text of /proc/net/arp, if the entry is complete.
std::optional<std::string> mac_from_arp(const std::string& arp_table, const std::string& ifname,
                                        uint32_t ip);

// Resolves the next-hop MAC towards `peer` ("a.b.c.d") out of `ifname`, in the calling thread's
// network namespace, waiting at most `timeout` for ARP. The error names the peer, the next hop
// and the interface.
Result<std::string> resolve_next_hop_mac(const std::string& peer, const std::string& ifname,
                                         std::chrono::milliseconds timeout);

// Gives the next-hop MAC towards a peer address out of an interface (resolve_next_hop_mac).
using MacResolver = std::function<Result<std::string>(const std::string& peer, const std::string& ifname)>;

// For each NIC of host `host` (`interfaces`, in rail order), the next-hop MAC towards every rank
// of another host in `endpoints`, out of that NIC's interface: rank -> MAC. Each NIC asks its own
// way: on a flat L2 segment the answer is the peer NIC's own MAC, across a routed fabric the
// gateway's of that NIC's route. An address is resolved once per NIC. Ranks of this host are not
// asked for (their steps never leave the host). The error names the NIC, its interface and the
// peer rank.
Result<std::vector<std::map<uint32_t, std::string>>> peer_macs_of_nics(
    const std::vector<std::string>& interfaces, uint32_t host, const std::vector<v1::RankEndpoint>& endpoints,
    const MacResolver& resolve);

}  // namespace collide::orchestrator::agent
