#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collide/testbed.pb.h"
#include "common/result.h"
#include "orchestrator/testbed/bgp_timers.h"
#include "orchestrator/testbed/testbed_plan.h"

// Routing by BGP on the virtual fabric (testbed.virtual.routing: bgp): FRR's zebra, bfdd and bgpd
// in every switch namespace, eBGP on every leaf-spine link as RFC 7938 lays out a data-center
// fabric and AI fabrics run it: each leaf an AS of its own, the spines of a plane one AS together
// (so a path that would leave a spine, go down to a leaf and up to another spine is refused there),
// every leaf announcing its hosts' rank subnets and installing the others over all its spines
// (multipath). A BFD session rides every BGP session, so a link that silently stops carrying
// frames is detected in bfd_interval x bfd_multiplier and its routes withdrawn; detection and
// convergence are then BGP's and BFD's own, and their timers the scenario's knobs.
//
// Pure: what each switch runs and which routes say that the fabric has converged. The daemons are
// frr_daemons.h's.
namespace collide::orchestrator::testbed {

// The spines of plane p are AS kSpineAsn + p; leaf l is AS kLeafAsnBase + l (private 2-byte ASNs;
// a fabric has at most 64 switches per tier).
inline constexpr uint32_t kSpineAsn = 65000;
inline constexpr uint32_t kLeafAsnBase = 65100;

// The timers of spec.bgp(), or what is wrong with them, starting with the field relative to
// VirtualTestbedSpec ("bgp.bfd_interval_ns: ..."). Refuses BGP settings without routing: bgp, and
// BGP on a fabric it does not cover here (pods, routes of one's own, no spines).
Result<BgpTimers> resolve_bgp(const v1::VirtualTestbedSpec& spec);

struct BgpNeighbor {
  std::string address;  // the peer's end of the link
  uint32_t asn = 0;
};

// One switch's BGP speaker.
struct BgpSpeaker {
  std::string netns;
  std::string name;  // "leaf0", as testbed show names the switch
  uint32_t asn = 0;
  std::string router_id;
  std::vector<std::string> networks;  // a leaf: its hosts' rank subnets, which it announces
  std::vector<BgpNeighbor> neighbors;
};

// Every switch of the plan that speaks BGP, leaves first.
std::vector<BgpSpeaker> bgp_speakers(const TestbedPlan& plan);

// The configuration of each daemon for one speaker (FRR's syntax; each daemon reads its own).
std::string zebra_conf(const BgpSpeaker& speaker);
std::string bfdd_conf(const BgpSpeaker& speaker, const BgpTimers& timers);
std::string bgpd_conf(const BgpSpeaker& speaker, const BgpTimers& timers);

// A route a converged fabric holds: on leaf `netns`, the rank subnet `prefix` of a host under
// another leaf, over `next_hops` spines (every spine both leaves are cabled to).
struct ConvergedRoute {
  std::string netns;
  std::string prefix;
  size_t next_hops = 0;
};
std::vector<ConvergedRoute> bgp_converged_routes(const TestbedPlan& plan);

// What `ip -j -4 route show proto bgp` printed in one namespace: each prefix with how many next
// hops it has (a multipath route lists them under "nexthops", a single one has a "gateway").
Result<std::vector<std::pair<std::string, size_t>>> parse_bgp_routes(const std::string& ip_json);

}  // namespace collide::orchestrator::testbed
