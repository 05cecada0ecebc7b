#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

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

}  // namespace collide::orchestrator::agent
