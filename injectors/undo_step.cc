#include "injectors/undo_step.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <regex>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/parse_number.h"
#include "injectors/guardian.h"
#include "injectors/rate_limit.h"

namespace collide::injectors {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<UndoOp, const char*>, 10> kOpNames = {{
    {UndoOp::kDeleteQdisc, "delete-qdisc"},
    {UndoOp::kDeleteClsact, "delete-clsact"},
    {UndoOp::kDeleteIngressRedirect, "delete-ingress-redirect"},
    {UndoOp::kDeleteIfb, "delete-ifb"},
    {UndoOp::kSetLinkUp, "set-link-up"},
    {UndoOp::kReplaceAddress, "replace-address"},
    {UndoOp::kReplaceRoute, "replace-route"},
    {UndoOp::kDeleteRoute, "delete-route"},
    {UndoOp::kDetachXdp, "detach-xdp"},
    {UndoOp::kReplaceNeighbor, "replace-neighbor"},
}};

const char* op_name(UndoOp op) {
  for (const auto& [value, name] : kOpNames) {
    if (value == op) return name;
  }
  return "?";
}

// The kernel's rule for interface names (shorter than IFNAMSIZ, no '/', ':' or white space), and
// no leading '-', which iproute2 would read as an option.
bool is_ifname(const std::string& name) {
  if (name.empty() || name.size() > 15 || name == "." || name == ".." || name[0] == '-') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return c > ' ' && c < 0x7f && c != '/' && c != ':';
  });
}

bool is_ip(const std::string& text, bool ipv6) {
  unsigned char buffer[16];
  return inet_pton(ipv6 ? AF_INET6 : AF_INET, text.c_str(), buffer) == 1;
}

// An address with an optional prefix length ("10.0.0.0/8", "fd00::1").
bool is_prefix(const std::string& text, bool ipv6, bool length_required) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return !length_required && is_ip(text, ipv6);
  auto length = parse_number<unsigned>(text.substr(slash + 1), "prefix length");
  return length.ok() && *length <= (ipv6 ? 128u : 32u) && is_ip(text.substr(0, slash), ipv6);
}

// A word iproute2 reads as a value after its keyword: a name or a number, never an option.
bool is_word(const std::string& text) {
  static const std::regex kWord("[A-Za-z0-9_]{1,32}");
  return std::regex_match(text, kWord);
}

Status bad(const char* field, const std::string& value, const char* what) {
  return invalid_argument(fmt::format("{} \"{}\" is not {}", field, value, what));
}

Status check_dev(const std::string& dev) {
  return is_ifname(dev) ? Status() : bad("dev", dev, "an interface name");
}

Status check_optional_word(const char* field, const std::string& value) {
  return value.empty() || is_word(value) ? Status() : bad(field, value, "a name or a number");
}

Status check_route(const RouteSpec& r) {
  static const std::array<const char*, 6> kTypes = {"", "unicast", "unreachable", "blackhole",
                                                    "prohibit", "throw"};
  if (std::find(kTypes.begin(), kTypes.end(), r.type) == kTypes.end()) {
    return bad("type", r.type, "a route type collide restores");
  }
  if (r.dst != "default" && !is_prefix(r.dst, r.ipv6, false)) {
    return bad("dst", r.dst, "\"default\" or an address of the route's family");
  }
  if (!r.gateway.empty() && !is_ip(r.gateway, r.ipv6)) {
    return bad("gateway", r.gateway, "an address of the route's family");
  }
  if (!r.dev.empty()) COLLIDE_RETURN_IF_ERROR(check_dev(r.dev));
  for (const RouteHop& hop : r.nexthops) {
    if (!hop.gateway.empty() && !is_ip(hop.gateway, r.ipv6)) {
      return bad("nexthop gateway", hop.gateway, "an address of the route's family");
    }
    if (!hop.dev.empty()) COLLIDE_RETURN_IF_ERROR(check_dev(hop.dev));
  }
  if (!r.prefsrc.empty() && !is_ip(r.prefsrc, r.ipv6)) {
    return bad("prefsrc", r.prefsrc, "an address of the route's family");
  }
  COLLIDE_RETURN_IF_ERROR(check_optional_word("protocol", r.protocol));
  COLLIDE_RETURN_IF_ERROR(check_optional_word("scope", r.scope));
  return check_optional_word("table", r.table);
}

std::vector<std::string> route_args(const RouteSpec& r) {
  std::vector<std::string> args = {"route", "replace"};
  if (!r.type.empty() && r.type != "unicast") args.push_back(r.type);
  args.push_back(r.dst);
  for (const RouteHop& hop : r.nexthops) {
    args.push_back("nexthop");
    if (!hop.gateway.empty()) args.insert(args.end(), {"via", hop.gateway});
    if (!hop.dev.empty()) args.insert(args.end(), {"dev", hop.dev});
    if (hop.weight) args.insert(args.end(), {"weight", std::to_string(*hop.weight)});
  }
  if (!r.gateway.empty()) args.insert(args.end(), {"via", r.gateway});
  if (!r.dev.empty()) args.insert(args.end(), {"dev", r.dev});
  if (!r.protocol.empty()) args.insert(args.end(), {"proto", r.protocol});
  if (!r.scope.empty()) args.insert(args.end(), {"scope", r.scope});
  if (!r.prefsrc.empty()) args.insert(args.end(), {"src", r.prefsrc});
  if (r.metric) args.insert(args.end(), {"metric", std::to_string(*r.metric)});
  if (!r.table.empty()) args.insert(args.end(), {"table", r.table});
  if (r.onlink) args.push_back("onlink");
  return args;
}

const char* family(bool ipv6) { return ipv6 ? "inet6" : "inet"; }

IpStep::Family ip_family(bool ipv6) { return ipv6 ? IpStep::Family::kIpv6 : IpStep::Family::kIpv4; }

// "02:00:00:00:00:05": six pairs of hex digits.
bool is_mac(const std::string& text) {
  static const std::regex kMac("([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}");
  return std::regex_match(text, kMac);
}

Result<bool> ipv6_of(const json& j) {
  const std::string f = j.at("family").get<std::string>();
  if (f != "inet" && f != "inet6") return bad("family", f, "inet or inet6");
  return f == "inet6";
}

std::string text(const json& j, const char* key) { return j.value(key, std::string()); }

UndoStep on_device(UndoOp op, std::string dev) {
  UndoStep s;
  s.op = op;
  s.dev = std::move(dev);
  return s;
}

}  // namespace

UndoStep UndoStep::delete_qdisc(std::string dev, std::string parent) {
  UndoStep s = on_device(UndoOp::kDeleteQdisc, std::move(dev));
  s.parent = std::move(parent);
  return s;
}

UndoStep UndoStep::delete_clsact(std::string dev) {
  return on_device(UndoOp::kDeleteClsact, std::move(dev));
}

UndoStep UndoStep::delete_ingress_redirect(std::string dev) {
  return on_device(UndoOp::kDeleteIngressRedirect, std::move(dev));
}

UndoStep UndoStep::delete_ifb(std::string dev) {
  return on_device(UndoOp::kDeleteIfb, std::move(dev));
}

UndoStep UndoStep::set_link_up(std::string dev) {
  return on_device(UndoOp::kSetLinkUp, std::move(dev));
}

UndoStep UndoStep::replace_address(std::string dev, AddressSpec address) {
  UndoStep s = on_device(UndoOp::kReplaceAddress, std::move(dev));
  s.address = std::move(address);
  return s;
}
UndoStep UndoStep::detach_xdp(std::string dev, uint32_t prog_id) {
  UndoStep s = on_device(UndoOp::kDetachXdp, std::move(dev));
  s.prog_id = prog_id;
  return s;
}

UndoStep UndoStep::replace_neighbor(std::string dev, NeighborSpec neighbor) {
  UndoStep s = on_device(UndoOp::kReplaceNeighbor, std::move(dev));
  s.neighbor = std::move(neighbor);
  return s;
}

UndoStep UndoStep::replace_route(RouteSpec route) {
  UndoStep s;
  s.op = UndoOp::kReplaceRoute;
  s.route = std::move(route);
  return s;
}

UndoStep UndoStep::delete_route(bool ipv6, std::string dst, std::string table) {
  UndoStep s;
  s.op = UndoOp::kDeleteRoute;
  s.route.ipv6 = ipv6;
  s.route.dst = std::move(dst);
  s.route.table = std::move(table);
  return s;
}

bool is_netns_name(const std::string& name) {
  static const std::regex kName("[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}");
  return std::regex_match(name, kName);
}

namespace {
// The operations that act on a route rather than a device.
bool is_route_op(UndoOp op) { return op == UndoOp::kReplaceRoute || op == UndoOp::kDeleteRoute; }
}  // namespace

Status check_step(const UndoStep& step) {
  if (!is_route_op(step.op)) COLLIDE_RETURN_IF_ERROR(check_dev(step.dev));
  switch (step.op) {
    case UndoOp::kDeleteQdisc: {
      static const std::regex kParent("root|[0-9a-f]{1,4}:[0-9a-f]{0,4}");
      if (!std::regex_match(step.parent, kParent)) {
        return bad("parent", step.parent, "\"root\" or a qdisc handle");
      }
      return {};
    }
    case UndoOp::kDeleteIfb: {
      static const std::regex kIfb(std::string(kCollideIfbPrefix) + "[0-9]{1,4}");
      if (!std::regex_match(step.dev, kIfb)) return bad("dev", step.dev, "a collide ifb device");
      return {};
    }
    case UndoOp::kReplaceAddress: {
      const AddressSpec& a = step.address;
      if (!is_prefix(a.cidr, a.ipv6, true)) {
        return bad("cidr", a.cidr, "an address with a prefix length");
      }
      if (!a.broadcast.empty() && !is_ip(a.broadcast, a.ipv6)) {
        return bad("broadcast", a.broadcast, "an address of the family");
      }
      return check_optional_word("scope", a.scope);
    }
    case UndoOp::kReplaceRoute:
      return check_route(step.route);
    case UndoOp::kDeleteRoute:
      // Only a prefix collide itself added: never "default", which would take a host's own away.
      if (!is_prefix(step.route.dst, step.route.ipv6, true)) {
        return bad("dst", step.route.dst, "an address with a prefix length");
      }
      return check_route(step.route);
    case UndoOp::kDetachXdp:
      if (step.prog_id == 0) return bad("prog_id", "0", "a BPF program id");
      return {};
    case UndoOp::kReplaceNeighbor:
      if (!is_ip(step.neighbor.ip, step.neighbor.ipv6)) {
        return bad("ip", step.neighbor.ip, "an address of the family");
      }
      if (!is_mac(step.neighbor.mac)) return bad("mac", step.neighbor.mac, "a MAC address");
      return {};
    case UndoOp::kDeleteClsact:
    case UndoOp::kDeleteIngressRedirect:
    case UndoOp::kSetLinkUp:
      return {};
  }
  return invalid_argument("unknown undo operation");
}

std::optional<IpStep> ip_step(const UndoStep& step) {
  switch (step.op) {
    case UndoOp::kDeleteIfb:
      return IpStep{IpStep::Family::kAny, {"link", "del", "dev", step.dev}};
    case UndoOp::kSetLinkUp:
      return IpStep{IpStep::Family::kAny, {"link", "set", "dev", step.dev, "up"}};
    case UndoOp::kReplaceAddress: {
      const AddressSpec& a = step.address;
      std::vector<std::string> args = {"addr", "replace", a.cidr, "dev", step.dev};
      if (!a.broadcast.empty()) args.insert(args.end(), {"broadcast", a.broadcast});
      if (!a.scope.empty()) args.insert(args.end(), {"scope", a.scope});
      return IpStep{ip_family(a.ipv6), std::move(args)};
    }
    case UndoOp::kReplaceRoute:
      return IpStep{ip_family(step.route.ipv6), route_args(step.route)};
    case UndoOp::kDeleteRoute: {
      std::vector<std::string> args = {"route", "del", step.route.dst};
      if (!step.route.table.empty()) args.insert(args.end(), {"table", step.route.table});
      return IpStep{ip_family(step.route.ipv6), std::move(args)};
    }
    case UndoOp::kReplaceNeighbor: {
      const NeighborSpec& n = step.neighbor;
      return IpStep{ip_family(n.ipv6),
                    {"neigh", "replace", n.ip, "lladdr", n.mac, "dev", step.dev, "nud", "permanent"}};
    }
    case UndoOp::kDeleteQdisc:
    case UndoOp::kDeleteClsact:
    case UndoOp::kDeleteIngressRedirect:
    case UndoOp::kDetachXdp:
      return std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::string> family_option(IpStep::Family family) {
  switch (family) {
    case IpStep::Family::kIpv4: return {"-4"};
    case IpStep::Family::kIpv6: return {"-6"};
    case IpStep::Family::kAny: return {};
  }
  return {};
}

std::vector<std::string> undo_argv(const std::string& netns, const UndoStep& step,
                                   int xdp_mode) {
  if (auto ip = ip_step(step)) {
    std::vector<std::string> args = family_option(ip->family);
    args.insert(args.end(), ip->args.begin(), ip->args.end());
    return netns_command("ip", netns, std::move(args));
  }
  switch (step.op) {
    case UndoOp::kDeleteQdisc: {
      std::vector<std::string> args = {"qdisc", "del", "dev", step.dev};
      if (step.parent == "root") {
        args.push_back("root");
      } else {
        args.insert(args.end(), {"parent", step.parent});
      }
      args.insert(args.end(), {"handle", kCollideQdiscHandle});
      return netns_command("tc", netns, std::move(args));
    }
    case UndoOp::kDeleteClsact:
      return netns_command("tc", netns, {"qdisc", "del", "dev", step.dev, "clsact"});
    case UndoOp::kDeleteIngressRedirect:
      return netns_command("tc", netns, {"filter", "del", "dev", step.dev, "ingress", "pref",
                                         std::to_string(kCollideFilterPref)});
    case UndoOp::kDetachXdp: {
      const char* keyword = xdp_mode == 2 ? "xdpgeneric" : xdp_mode == 3 ? "xdpoffload" : "xdpdrv";
      return netns_command("ip", netns, {"link", "set", "dev", step.dev, keyword, "off"});
    }
    default:
      return {};
  }
}

json encode_step(const UndoStep& step) {
  json j = {{"op", op_name(step.op)}};
  if (!is_route_op(step.op)) j["dev"] = step.dev;
  if (step.op == UndoOp::kDeleteQdisc) j["parent"] = step.parent;
  if (step.op == UndoOp::kDetachXdp) j["prog_id"] = step.prog_id;
  if (step.op == UndoOp::kReplaceNeighbor) {
    j["family"] = family(step.neighbor.ipv6);
    j["ip"] = step.neighbor.ip;
    j["mac"] = step.neighbor.mac;
  }
  if (step.op == UndoOp::kReplaceAddress) {
    j["family"] = family(step.address.ipv6);
    j["cidr"] = step.address.cidr;
    j["broadcast"] = step.address.broadcast;
    j["scope"] = step.address.scope;
  }
  if (is_route_op(step.op)) {
    const RouteSpec& r = step.route;
    json hops = json::array();
    for (const RouteHop& hop : r.nexthops) {
      json h = {{"gateway", hop.gateway}, {"dev", hop.dev}};
      if (hop.weight) h["weight"] = *hop.weight;
      hops.push_back(std::move(h));
    }
    j.update({{"family", family(r.ipv6)}, {"type", r.type}, {"dst", r.dst},
              {"gateway", r.gateway}, {"dev", r.dev}, {"nexthops", std::move(hops)},
              {"protocol", r.protocol}, {"scope", r.scope}, {"prefsrc", r.prefsrc},
              {"table", r.table}, {"onlink", r.onlink}});
    if (r.metric) j["metric"] = *r.metric;
  }
  return j;
}

Result<UndoStep> decode_step(const json& j) {
  try {
    const std::string name = j.at("op").get<std::string>();
    auto known = std::find_if(kOpNames.begin(), kOpNames.end(),
                              [&](const auto& entry) { return name == entry.second; });
    if (known == kOpNames.end()) {
      return invalid_argument(fmt::format("unknown undo operation \"{}\"", name));
    }
    UndoStep step;
    step.op = known->first;
    step.dev = text(j, "dev");
    step.parent = text(j, "parent");
    if (step.op == UndoOp::kDetachXdp) {
      if (!j.at("prog_id").is_number_unsigned() || j.at("prog_id").get<uint64_t>() > UINT32_MAX) {
        return bad("prog_id", j.at("prog_id").dump(), "a BPF program id");
      }
      step.prog_id = j.at("prog_id").get<uint32_t>();
    }
    if (step.op == UndoOp::kReplaceAddress) {
      auto ipv6 = ipv6_of(j);
      if (!ipv6.ok()) return ipv6.status();
      step.address = {*ipv6, text(j, "cidr"), text(j, "broadcast"), text(j, "scope")};
    }
    if (step.op == UndoOp::kReplaceNeighbor) {
      auto ipv6 = ipv6_of(j);
      if (!ipv6.ok()) return ipv6.status();
      step.neighbor = {*ipv6, text(j, "ip"), text(j, "mac")};
    }
    if (is_route_op(step.op)) {
      auto ipv6 = ipv6_of(j);
      if (!ipv6.ok()) return ipv6.status();
      RouteSpec& r = step.route;
      r.ipv6 = *ipv6;
      r.type = text(j, "type");
      r.dst = text(j, "dst");
      r.gateway = text(j, "gateway");
      r.dev = text(j, "dev");
      for (const json& hop : j.value("nexthops", json::array())) {
        RouteHop h{text(hop, "gateway"), text(hop, "dev"), std::nullopt};
        if (hop.contains("weight")) {
          if (!hop.at("weight").is_number_unsigned()) return bad("weight", hop.at("weight").dump(), "a count");
          h.weight = hop.at("weight").get<uint32_t>();
        }
        r.nexthops.push_back(std::move(h));
      }
      r.protocol = text(j, "protocol");
      r.scope = text(j, "scope");
      r.prefsrc = text(j, "prefsrc");
      if (j.contains("metric")) {
        if (!j.at("metric").is_number_unsigned()) return bad("metric", j.at("metric").dump(), "a count");
        r.metric = j.at("metric").get<uint64_t>();
      }
      r.table = text(j, "table");
      r.onlink = j.value("onlink", false);
    }
    COLLIDE_RETURN_IF_ERROR(check_step(step));
    return step;
  } catch (const json::exception& e) {
    return invalid_argument(fmt::format("malformed undo step: {}", e.what()));
  }
}

}  // namespace collide::injectors
