#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collide/testbed.pb.h"
#include "common/result.h"
#include "orchestrator/testbed/bgp_timers.h"
#include "orchestrator/testbed/port_queue.h"

// What a virtual leaf-spine fabric consists of, worked out before anything is created: pure, so
// addressing and routing are unit-tested without root.
//
// Addressing: every link is a /31 from 198.18.0.0/16 (RFC 2544's benchmarking range). Ranks get
// addresses of their own, 198.19.<host>.<nic*32 + slot + 1>, one /27 per host NIC; leaves route
// each NIC's /27 to it (with a permanent neighbour entry, because the NIC belongs to DPDK and
// answers no ARP) and spread everything else over the spines (ECMP, L4 hash). MACs are fixed by
// the plan, so frames can be addressed before the fabric exists.
//
// Rails: with several NICs per host, NIC r of a host goes to the leaf of rail r (leaf_of_nic), so
// traffic between NICs of one index stays under one leaf and only cross-rail traffic climbs to the
// spines, as on a rail-optimized training cluster.
namespace collide::orchestrator::testbed {

enum class Role { kHost, kLeaf, kSpine, kSuperSpine };

struct PlannedNamespace {
  std::string name;
  Role role = Role::kHost;
  uint32_t index = 0;
  uint32_t pod = 0;  // leaves and spines: their pod (3-tier; 0 in a 2-tier fabric)
  uint32_t plane = 0;  // leaves and spines: their plane (0 with one plane)
  // The switch's multipath hash key (fib_multipath_hash_seed); 0: the kernel's own, one for all.
  uint32_t hash_seed = 0;
};

// "leaf2", "spine0", "super1", "h3": how reports and scenarios name a namespace of the plan.
std::string switch_name(const PlannedNamespace& ns);

// A testbed's namespace read back from its name ("<testbed>-leaf2": the testbed "<testbed>" and
// Role::kLeaf), as switch_name() and host_namespace() make them; unset for any other namespace.
struct NamespaceOfTestbed {
  std::string testbed;
  Role role = Role::kHost;
};
std::optional<NamespaceOfTestbed> namespace_of_testbed(const std::string& netns);

struct LinkEnd {
  std::string netns;
  std::string ifname;
  std::string mac;
  std::string address;  // "a.b.c.d/31"
  PortQueue queue;      // what leaves through this end
};

struct PlannedLink {
  LinkEnd a;  // the host side, or the leaf side of a leaf-spine link
  LinkEnd b;
  double gbps = 0;  // 0: unshaped
};

struct PlannedRoute {
  std::string netns;
  std::string prefix;
  std::vector<std::string> via;  // next hops; more than one is ECMP
  // Between switches: what a routing protocol learns instead (routing: bgp installs only the
  // leaves' routes to their own hosts).
  bool fabric = false;
};

// The line of `ip -batch` that puts `route` in place in its namespace ("route replace ..."): one
// next hop as `via`, several as a multipath route.
std::string route_replace_line(const PlannedRoute& route);

// "10.0.0.1/31" -> "10.0.0.1": a link end's address as a next hop names it.
inline std::string bare_address(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

struct PlannedNeighbor {
  std::string netns;
  std::string ip;
  std::string mac;
  std::string dev;
};

// One NIC of one host: where a replay agent attaches and how it addresses frames.
struct HostNic {
  uint32_t host = 0;
  uint32_t nic = 0;
  std::string netns;
  std::string ifname;
  std::string mac;
  std::string gateway_mac;  // the leaf port: every frame leaves towards it
  std::string rank_subnet;  // "198.19.h.x/27"
};

struct TestbedPlan {
  std::string name;
  std::vector<PlannedNamespace> namespaces;
  std::vector<PlannedLink> links;
  std::vector<PlannedRoute> routes;
  std::vector<PlannedNeighbor> neighbors;
  std::vector<HostNic> nics;
  uint32_t mtu = 1500;
  std::optional<BgpTimers> bgp;  // routing: bgp (FRR in the switches); unset: static routes
};

Status validate(const v1::VirtualTestbedSpec& spec);
Result<TestbedPlan> plan_testbed(const v1::VirtualTestbedSpec& spec);

// The leaf NIC `nic` of `host` is cabled to. Rails: the leaves form `rail_groups` groups of
// `nics_per_host` leaves, one per rail; host h belongs to group h % rail_groups and its NIC r goes
// to that group's leaf r. One NIC per host makes every leaf a group: host h on leaf h % leaves.
uint32_t leaf_of_nic(uint32_t host, uint32_t nic, uint32_t nics_per_host, uint32_t rail_groups);

// Which leaf each host hangs under, by host: with one NIC its leaf, with rails its rail group (the
// leaves its NICs share with the hosts whose rail traffic stays under them). What a
// topology-aware ring order groups hosts by.
std::vector<uint32_t> leaf_group_of_hosts(const v1::VirtualTestbedSpec& spec);

// The namespace of host `host` of testbed `testbed` ("<testbed>-h<host>").
std::string host_namespace(const std::string& testbed, uint32_t host);

// The address of the `slot`-th rank (0..30) on NIC `nic` of `host` (host-order integer).
uint32_t rank_address(uint32_t host, uint32_t nic, uint32_t slot);

}  // namespace collide::orchestrator::testbed
