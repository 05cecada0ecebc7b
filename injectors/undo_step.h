#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"

// One step of putting a change back, recorded as data: an operation from a closed set and the
// objects it acts on. collide builds the iproute2 command of each step itself, so a record read
// back from disk (by the guardian or a sweep running as root) can name an interface or a route,
// but never choose the program, an option, or an operation collide does not make.
namespace collide::injectors {

enum class UndoOp {
  kDeleteQdisc,            // tc qdisc del dev D (root | parent P) handle c011:
  kDeleteClsact,           // tc qdisc del dev D clsact
  kDeleteIngressRedirect,  // tc filter del dev D ingress pref <collide's u32 priority>
  kDeleteIfb,              // ip link del dev collide-ifb<N>
  kSetLinkUp,              // ip link set dev D up
  kReplaceAddress,         // ip -4|-6 addr replace A dev D [broadcast B] [scope S]
  kReplaceRoute,           // ip -4|-6 route replace <the route as `ip -j route` showed it>
  kDeleteRoute,            // ip -4|-6 route del <dst> [table T]: a route collide added
  kDetachXdp,              // ip link set dev D xdp off, only while program <prog_id> is attached
  kReplaceNeighbor,        // ip -4|-6 neigh replace A lladdr M dev D nud permanent
};

struct AddressSpec {
  bool ipv6 = false;
  std::string cidr;  // "10.0.0.1/24"
  std::string broadcast;
  std::string scope;  // empty: global
};

// A permanent neighbour entry: taking a link down flushes them, and a testbed's host NICs answer
// no ARP, so a flapped link needs its entries back.
struct NeighborSpec {
  bool ipv6 = false;
  std::string ip;
  std::string mac;  // "02:00:00:00:00:05"
};

struct RouteHop {
  std::string gateway;
  std::string dev;
  std::optional<uint32_t> weight;
};

struct RouteSpec {
  bool ipv6 = false;
  std::string type;  // empty or "unicast" for an ordinary route
  std::string dst;   // "default" or an address with an optional prefix length
  std::string gateway;
  std::string dev;
  std::vector<RouteHop> nexthops;  // a multipath route (then gateway/dev are empty)
  std::string protocol;
  std::string scope;
  std::string prefsrc;
  std::optional<uint64_t> metric;
  std::string table;
  bool onlink = false;
};

struct UndoStep {
  UndoOp op = UndoOp::kSetLinkUp;
  std::string dev;     // every operation but the routes' acts on this device
  std::string parent;  // kDeleteQdisc: "root" or a parent handle such as "1:2"
  AddressSpec address;
  RouteSpec route;
  NeighborSpec neighbor;
  uint32_t prog_id = 0;  // kDetachXdp

  static UndoStep delete_qdisc(std::string dev, std::string parent);
  static UndoStep delete_clsact(std::string dev);
  static UndoStep delete_ingress_redirect(std::string dev);
  static UndoStep delete_ifb(std::string dev);
  static UndoStep set_link_up(std::string dev);
  static UndoStep replace_address(std::string dev, AddressSpec address);
  static UndoStep replace_route(RouteSpec route);
  static UndoStep delete_route(bool ipv6, std::string dst, std::string table = "");
  static UndoStep detach_xdp(std::string dev, uint32_t prog_id);
  static UndoStep replace_neighbor(std::string dev, NeighborSpec neighbor);
};

// The steps `ip` performs, as `ip [-4|-6] ARGS...` without the program and namespace: several of
// them run as the lines of one `ip -batch` (guardian.h), which on a loaded machine returns a
// link in one process rather than one per address, route and neighbour.
struct IpStep {
  enum class Family { kAny, kIpv4, kIpv6 };  // the -4/-6 option the arguments need
  Family family = Family::kAny;
  std::vector<std::string> args;
};
// Unset for the steps tc performs, and for kDetachXdp, whose command depends on the attach mode.
std::optional<IpStep> ip_step(const UndoStep& step);
// The option that gives ip the family: {"-4"}, {"-6"}, or nothing for kAny.
std::vector<std::string> family_option(IpStep::Family family);

// The command that performs a step in a namespace ("" = the host's). The step must have passed
// check_step (decode_step does that). For kDetachXdp, `xdp_mode` is the attach mode the kernel
// reports (injectors/xdp_record.h), since each mode is removed by its own keyword.
std::vector<std::string> undo_argv(const std::string& netns, const UndoStep& step,
                                   int xdp_mode = 1);

// Every name and address a step holds has the shape its operation needs, so that no field can
// be read by iproute2 as an option or a keyword. The message names the field.
Status check_step(const UndoStep& step);

// A namespace name as `ip netns` makes them (a path component, not an option).
bool is_netns_name(const std::string& name);

nlohmann::json encode_step(const UndoStep& step);
// Refuses an operation outside the set, and any field check_step refuses.
Result<UndoStep> decode_step(const nlohmann::json& j);

}  // namespace collide::injectors
