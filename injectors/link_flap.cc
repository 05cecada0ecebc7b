#include "injectors/link_flap.h"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/process.h"
#include "injectors/fault_rules.h"

namespace collide::injectors {
namespace {

using nlohmann::json;

Result<json> parse_json(const std::string& text, std::string_view what) {
  try {
    json j = text.empty() ? json::array() : json::parse(text);
    if (!j.is_array()) return data_loss(fmt::format("{}: expected a JSON list", what));
    return j;
  } catch (const json::exception& e) {
    return data_loss(fmt::format("{}: malformed JSON: {}", what, e.what()));
  }
}

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool route_uses(const json& route, const std::string& ifname) {
  if (string_field(route, "dev") == ifname) return true;
  if (auto hops = route.find("nexthops"); hops != route.end() && hops->is_array()) {
    for (const json& hop : *hops) {
      if (string_field(hop, "dev") == ifname) return true;
    }
  }
  return false;
}

// The route as `ip -j route` printed it, for `ip route replace` to recreate; `text` for people.
RouteSpec route_spec(const json& route, bool ipv6, std::string* text) {
  RouteSpec r;
  r.ipv6 = ipv6;
  r.type = string_field(route, "type");
  r.dst = string_field(route, "dst");
  *text = r.dst;
  if (auto hops = route.find("nexthops"); hops != route.end() && hops->is_array()) {
    for (const json& hop : *hops) {
      RouteHop h{string_field(hop, "gateway"), string_field(hop, "dev"), std::nullopt};
      if (!h.gateway.empty()) *text += " nexthop via " + h.gateway;
      if (auto weight = hop.find("weight"); weight != hop.end() && weight->is_number_unsigned()) {
        h.weight = weight->get<uint32_t>();
      }
      r.nexthops.push_back(std::move(h));
    }
  } else {
    r.gateway = string_field(route, "gateway");
    if (!r.gateway.empty()) *text += " via " + r.gateway;
    r.dev = string_field(route, "dev");
  }
  r.protocol = string_field(route, "protocol");
  r.scope = string_field(route, "scope");
  r.prefsrc = string_field(route, "prefsrc");
  if (auto metric = route.find("metric"); metric != route.end() && metric->is_number_unsigned()) {
    r.metric = metric->get<uint64_t>();
  }
  r.table = string_field(route, "table");
  if (auto flags = route.find("flags"); flags != route.end() && flags->is_array()) {
    for (const json& flag : *flags) {
      if (flag.is_string() && flag.get<std::string>() == "onlink") r.onlink = true;
    }
  }
  return r;
}

Status add_routes(LinkSnapshot& snapshot, const json& routes, bool ipv6) {
  for (const json& route : routes) {
    if (!route.is_object()) return data_loss("ip route: an entry is not an object");
    if (!route_uses(route, snapshot.ifname)) continue;
    // The kernel recreates these itself when the link and its addresses come back.
    const std::string protocol = string_field(route, "protocol");
    if (protocol == "kernel") continue;
    // A routing daemon's (bgp, ospf, ...): the daemon withdraws it with the link and installs it
    // again once its session is back; put back by hand it would stand in for the daemon's.
    if (!protocol.empty() && protocol != "boot" && protocol != "static") continue;
    const std::string table = string_field(route, "table");
    if (table == "local") continue;
    const std::string type = string_field(route, "type");
    if (type == "local" || type == "broadcast" || type == "multicast") continue;
    if (string_field(route, "dst").empty()) return data_loss("ip route: a route has no dst");
    std::string text;
    UndoStep step = UndoStep::replace_route(route_spec(route, ipv6, &text));
    // A route collide could not put back must stop the flap before the link goes down.
    if (Status checked = check_step(step); !checked.ok()) {
      return checked.with_context(fmt::format("route {}", text));
    }
    snapshot.routes.push_back(text);
    snapshot.restore.push_back(std::move(step));
  }
  return {};
}

Status add_neighbors(LinkSnapshot& snapshot, const json& neighbors) {
  for (const json& entry : neighbors) {
    if (!entry.is_object()) return data_loss("ip neigh: an entry is not an object");
    const std::string ip = string_field(entry, "dst");
    const std::string mac = string_field(entry, "lladdr");
    // An entry without an address to answer with (noarp, say) is nothing a peer relies on.
    if (ip.empty() || mac.empty()) continue;
    UndoStep step = UndoStep::replace_neighbor(
        snapshot.ifname, {ip.find(':') != std::string::npos, ip, mac});
    if (Status checked = check_step(step); !checked.ok()) {
      return checked.with_context(fmt::format("neighbour {}", ip));
    }
    snapshot.neighbors.push_back(fmt::format("{} lladdr {}", ip, mac));
    snapshot.restore.push_back(std::move(step));
  }
  return {};
}

Result<std::string> ip_json(const std::string& netns, std::vector<std::string> args) {
  std::vector<std::string> argv = netns_command("ip", netns, {"-j"});
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = process::run_command(argv);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return not_found(fmt::format("`ip {}`{}: {}", fmt::join(args, " "),
                                 netns.empty() ? "" : " in netns " + netns, result->output));
  }
  return result->output;
}

}  // namespace

Result<LinkSnapshot> snapshot_from_json(const std::string& netns, const std::string& ifname,
                                        const LinkJson& text) {
  LinkSnapshot snapshot;
  snapshot.netns = netns;
  snapshot.ifname = ifname;
  snapshot.restore.push_back(UndoStep::set_link_up(ifname));

  auto links = parse_json(text.addresses, "ip addr");
  if (!links.ok()) return links.status();
  bool found = false;
  for (const json& link : *links) {
    if (string_field(link, "ifname") != ifname) continue;
    found = true;
    if (auto flags = link.find("flags"); flags != link.end() && flags->is_array()) {
      for (const json& flag : *flags) snapshot.was_up |= flag.is_string() && flag == "UP";
    }
    auto infos = link.find("addr_info");
    if (infos == link.end() || !infos->is_array()) continue;
    for (const json& info : *infos) {
      const std::string family = string_field(info, "family");
      const std::string local = string_field(info, "local");
      auto prefix = info.find("prefixlen");
      if (local.empty() || prefix == info.end() || !prefix->is_number()) continue;
      // IPv6 link-local addresses come back by themselves with the link.
      if (family == "inet6" && string_field(info, "scope") == "link") continue;
      const std::string cidr = fmt::format("{}/{}", local, prefix->get<int>());
      AddressSpec address{family == "inet6", cidr, string_field(info, "broadcast"),
                          string_field(info, "scope")};
      if (address.scope == "global") address.scope.clear();
      snapshot.addresses.push_back(cidr);
      snapshot.restore.push_back(UndoStep::replace_address(ifname, std::move(address)));
    }
  }
  if (!found) {
    return not_found(fmt::format("no interface {}{}", ifname,
                                 netns.empty() ? "" : " in netns " + netns));
  }

  auto routes4 = parse_json(text.routes4, "ip -4 route");
  if (!routes4.ok()) return routes4.status();
  COLLIDE_RETURN_IF_ERROR(add_routes(snapshot, *routes4, false));
  auto routes6 = parse_json(text.routes6, "ip -6 route");
  if (!routes6.ok()) return routes6.status();
  COLLIDE_RETURN_IF_ERROR(add_routes(snapshot, *routes6, true));
  auto neighbors = parse_json(text.neighbors, "ip neigh");
  if (!neighbors.ok()) return neighbors.status();
  COLLIDE_RETURN_IF_ERROR(add_neighbors(snapshot, *neighbors));
  return snapshot;
}

Result<LinkSnapshot> take_snapshot(const std::string& netns, const std::string& ifname) {
  auto addrs = ip_json(netns, {"addr", "show", "dev", ifname});
  if (!addrs.ok()) return addrs.status();
  auto routes4 = ip_json(netns, {"-4", "route", "show", "table", "all"});
  if (!routes4.ok()) return routes4.status();
  // A host without IPv6 answers with an error here; it simply has no IPv6 routes.
  auto routes6 = ip_json(netns, {"-6", "route", "show", "table", "all"});
  auto neighbors = ip_json(netns, {"neigh", "show", "dev", ifname, "nud", "permanent"});
  if (!neighbors.ok()) return neighbors.status();
  return snapshot_from_json(netns, ifname,
                            {*addrs, *routes4, routes6.ok() ? *routes6 : "[]", *neighbors});
}

Result<FlapSchedule> parse_flap_spec(std::string_view text) {
  FlapSchedule schedule;
  const size_t comma = text.find(',');
  auto down = parse_duration(text.substr(0, comma));
  if (!down.ok()) return down.status().with_context("--flap DOWN_FOR");
  if (down->count() == 0) return invalid_argument("--flap: the link must stay down for some time");
  schedule.down_for = *down;
  if (comma != std::string_view::npos) {
    auto every = parse_duration(text.substr(comma + 1));
    if (!every.ok()) return every.status().with_context("--flap EVERY");
    if (*every <= *down) {
      return invalid_argument(fmt::format(
          "--flap {}: the period must be longer than the time down", std::string(text)));
    }
    schedule.every = *every;
  }
  return schedule;
}

Result<std::unique_ptr<LinkDown>> LinkDown::take_down(Guardian& guardian, const std::string& netns,
                                                      const std::string& ifname) {
  auto snapshot = take_snapshot(netns, ifname);
  if (!snapshot.ok()) return snapshot.status().with_context("before a link flap");
  return take_down(guardian, std::move(snapshot).value());
}

Result<std::unique_ptr<LinkDown>> LinkDown::take_down(Guardian& guardian, LinkSnapshot snapshot) {
  const std::string netns = snapshot.netns;
  const std::string ifname = snapshot.ifname;
  // Bringing "back" a link that someone else took down would be a change of our own.
  if (!snapshot.was_up) {
    return failed_precondition(fmt::format("{}{} is already down", ifname,
                                           netns.empty() ? "" : " in netns " + netns));
  }
  UndoAction undo;
  undo.description = fmt::format("link {}{} down", ifname, netns.empty() ? "" : " in " + netns);
  undo.netns = netns;
  undo.devices = {ifname};
  undo.steps = snapshot.restore;
  auto id = guardian.register_undo(undo);
  if (!id.ok()) return id.status();
  std::unique_ptr<LinkDown> down(new LinkDown(guardian, std::move(snapshot), *id));
  if (Status set = process::run_checked(
          netns_command("ip", netns, {"link", "set", "dev", ifname, "down"}));
      !set.ok()) {
    down->bring_up();
    return set;
  }
  return down;
}

LinkDown::~LinkDown() { bring_up(); }

void LinkDown::bring_up() {
  if (up_) return;
  up_ = true;
  guardian_.undo(undo_id_);
}

Result<std::unique_ptr<LinkFlapper>> LinkFlapper::start(Guardian& guardian, std::string netns,
                                                        std::string ifname,
                                                        FlapSchedule schedule) {
  if (schedule.down_for.count() <= 0) return invalid_argument("a flap needs a time down");
  // Fail now, not in the thread, if the interface is not there.
  auto snapshot = take_snapshot(netns, ifname);
  if (!snapshot.ok()) return snapshot.status();
  std::unique_ptr<LinkFlapper> flapper(
      new LinkFlapper(guardian, std::move(netns), std::move(ifname), schedule));
  flapper->thread_ = std::thread([f = flapper.get()] { f->run(); });
  return flapper;
}

LinkFlapper::~LinkFlapper() { stop(); }

void LinkFlapper::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool LinkFlapper::sleep_until(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return wake_.wait_until(lock, deadline, [&] { return stopping_; });
}

void LinkFlapper::run() {
  auto log = logging::get("faults");
  auto cycle_start = std::chrono::steady_clock::now() + schedule_.start_after;
  while (!sleep_until(cycle_start)) {
    {
      auto down = LinkDown::take_down(guardian_, netns_, ifname_);
      if (!down.ok()) {
        std::lock_guard lock(mutex_);
        error_ = down.status();
        log->error("link flap of {}: {}", ifname_, error_.message());
        break;
      }
      sleep_until(cycle_start + schedule_.down_for);
      (*down)->bring_up();
    }
    {
      std::lock_guard lock(mutex_);
      ++flaps_;
    }
    if (!schedule_.every) break;
    cycle_start += *schedule_.every;
  }
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  wake_.notify_all();
}

bool LinkFlapper::wait_finished(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return wake_.wait_for(lock, timeout, [&] { return finished_; });
}

int LinkFlapper::flaps() const {
  std::lock_guard lock(mutex_);
  return flaps_;
}

Status LinkFlapper::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace collide::injectors
