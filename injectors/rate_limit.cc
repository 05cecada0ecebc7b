#include "injectors/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/process.h"

namespace collide::injectors {
namespace {

using nlohmann::json;

Result<json> tc_json(const std::string& netns, std::vector<std::string> args) {
  std::vector<std::string> argv = netns_command("tc", netns, {"-j"});
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = process::run_command(argv);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return not_found(fmt::format("`{}`: {}", fmt::join(argv, " "), result->output));
  }
  try {
    return result->output.empty() ? json::array() : json::parse(result->output);
  } catch (const json::exception& e) {
    return data_loss(fmt::format("`{}` printed malformed JSON: {}", fmt::join(argv, " "),
                                 e.what()));
  }
}

std::string field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

uint64_t default_burst(uint64_t rate_bps) {
  // Tokens beyond the bucket are lost, so the bucket must cover the longest pause in dequeuing:
  // on a busy host the qdisc timer fires milliseconds late, and a 2 ms bucket measurably lost
  // 3-4% of the rate. 10 ms of traffic, at least a few 9 KB frames (tbf drops a packet larger than
  // its bucket), at most 64 MiB.
  const uint64_t ten_ms = rate_bps / 8 / 100;
  return std::clamp<uint64_t>(ten_ms, 32 * 1024, 64ull * 1024 * 1024);
}

std::vector<std::string> tbf_args(const RateLimitSpec& spec) {
  const uint64_t burst = spec.burst_bytes != 0 ? spec.burst_bytes : default_burst(spec.rate_bps);
  // 50 ms of queue: enough for TCP to keep the bucket busy, short enough to notice.
  return {"rate", fmt::format("{}bit", spec.rate_bps), "burst", std::to_string(burst), "latency",
          "50ms"};
}

Result<std::string> egress_parent(const std::string& qdisc_json) {
  json qdiscs;
  try {
    qdiscs = json::parse(qdisc_json);
  } catch (const json::exception& e) {
    return data_loss(fmt::format("`tc -j qdisc show` printed malformed JSON: {}", e.what()));
  }
  if (!qdiscs.is_array()) return data_loss("`tc -j qdisc show` did not print a list");
  std::string parent = "root";
  for (const json& q : qdiscs) {
    if (!q.is_object() || !q.value("root", false)) continue;
    const std::string kind = field(q, "kind");
    const std::string handle = field(q, "handle");
    if (handle == kCollideQdiscHandle) {
      return failed_precondition("already shaped by collide (a tbf with handle c011: is there)");
    }
    if (kind == "tbf") {
      // Someone shapes this link already (e.g. the testbed's link speed): nest under it, so
      // both limits hold and removing ours leaves theirs.
      parent = handle + "1";
    } else if (kind != "noqueue" && handle != "0:") {
      return failed_precondition(fmt::format(
          "its root qdisc is a {} ({}) that collide did not create; it will not replace it", kind,
          handle));
    }
  }
  return parent;
}

std::string next_ifb_name(const std::vector<std::string>& existing) {
  const std::set<std::string> taken(existing.begin(), existing.end());
  for (int n = 0;; ++n) {
    std::string name = fmt::format("{}{}", kCollideIfbPrefix, n);
    if (!taken.contains(name)) return name;
  }
}

Result<std::unique_ptr<RateLimit>> RateLimit::apply(Guardian& guardian, const std::string& netns,
                                                    const std::string& ifname,
                                                    const RateLimitSpec& spec) {
  if (spec.rate_bps == 0) return invalid_argument("a rate limit needs a rate");
  std::unique_ptr<RateLimit> limit(new RateLimit(guardian));
  limit->burst_ = spec.burst_bytes != 0 ? spec.burst_bytes : default_burst(spec.rate_bps);
  Status applied = spec.direction == Direction::kEgress
                       ? limit->apply_egress(netns, ifname, spec)
                       : limit->apply_ingress(netns, ifname, spec);
  if (!applied.ok()) {
    limit->remove();
    return applied.with_context(fmt::format("rate limit on {}{}", ifname,
                                            netns.empty() ? "" : " in netns " + netns));
  }
  logging::get("faults")->info("{}{}: {} shaped to {} bit/s (burst {} B){}", ifname,
                               netns.empty() ? "" : " in " + netns,
                               spec.direction == Direction::kEgress ? "egress" : "ingress",
                               spec.rate_bps, limit->burst_,
                               limit->ifb_.empty() ? "" : " through " + limit->ifb_);
  return limit;
}

Status RateLimit::apply_egress(const std::string& netns, const std::string& ifname,
                               const RateLimitSpec& spec) {
  auto qdiscs = tc_json(netns, {"qdisc", "show", "dev", ifname});
  if (!qdiscs.ok()) return qdiscs.status();
  auto found = egress_parent(qdiscs->dump());
  if (!found.ok()) return found.status();
  const std::string parent = *found;
  UndoAction undo;
  undo.description = fmt::format("{}{}: egress tbf", ifname, netns.empty() ? "" : " in " + netns);
  undo.netns = netns;
  undo.devices = {ifname};
  std::vector<std::string> where =
      parent == "root" ? std::vector<std::string>{"root"} : std::vector<std::string>{"parent",
                                                                                     parent};
  undo.steps = {UndoStep::delete_qdisc(ifname, parent)};
  auto id = guardian_.register_undo(undo);
  if (!id.ok()) return id.status();
  undo_ids_.push_back(*id);

  std::vector<std::string> add = {"qdisc", "add", "dev", ifname};
  add.insert(add.end(), where.begin(), where.end());
  add.insert(add.end(), {"handle", kCollideQdiscHandle, "tbf"});
  const auto args = tbf_args(spec);
  add.insert(add.end(), args.begin(), args.end());
  return process::run_checked(netns_command("tc", netns, add));
}

Status RateLimit::apply_ingress(const std::string& netns, const std::string& ifname,
                                const RateLimitSpec& spec) {
  auto qdiscs = tc_json(netns, {"qdisc", "show", "dev", ifname});
  if (!qdiscs.ok()) return qdiscs.status();
  bool have_ingress_hook = false;
  for (const json& q : *qdiscs) {
    const std::string kind = q.is_object() ? field(q, "kind") : "";
    if (kind == "clsact" || kind == "ingress") have_ingress_hook = true;
  }
  auto filters = tc_json(netns, {"filter", "show", "dev", ifname, "ingress"});
  if (have_ingress_hook && filters.ok()) {
    for (const json& f : *filters) {
      if (f.is_object() && f.value("pref", 0u) == kCollideFilterPref) {
        return failed_precondition("already shaped by collide on ingress");
      }
    }
  }
  int mtu = 1500;
  std::vector<std::string> names;
  {
    auto out = process::run_command(netns_command("ip", netns, {"-j", "link", "show"}));
    if (!out.ok()) return out.status();
    try {
      for (const json& link : json::parse(out->output)) {
        names.push_back(field(link, "ifname"));
        if (names.back() == ifname) mtu = link.value("mtu", 1500);
      }
    } catch (const json::exception& e) {
      return data_loss(fmt::format("`ip -j link show` printed malformed JSON: {}", e.what()));
    }
  }
  if (std::find(names.begin(), names.end(), ifname) == names.end()) {
    return not_found(fmt::format("no interface {}", ifname));
  }

  // The ifb first, under a name no one else holds: two collide runs may race for a name, and
  // the loser must not register (and later undo) the winner's device.
  for (int attempt = 0; attempt < 8 && ifb_.empty(); ++attempt) {
    const std::string candidate = next_ifb_name(names);
    names.push_back(candidate);
    UndoAction undo;
    undo.description = fmt::format("{}{}: ifb {}", ifname, netns.empty() ? "" : " in " + netns,
                                   candidate);
    undo.netns = netns;
    undo.devices = {candidate};
    undo.steps = {UndoStep::delete_ifb(candidate)};
    auto id = guardian_.register_undo(undo);
    if (!id.ok()) return id.status();
    auto created = process::run_command(
        netns_command("ip", netns, {"link", "add", candidate, "type", "ifb"}));
    if (!created.ok() || created->exit_code != 0) {
      guardian_.forget(*id);
      if (created.ok() && created->output.find("exists") != std::string::npos) continue;
      return created.ok() ? internal_error(fmt::format("creating ifb {}: {}", candidate,
                                                       created->output))
                          : created.status();
    }
    undo_ids_.push_back(*id);
    ifb_ = candidate;
  }
  if (ifb_.empty()) return unavailable("no free collide-ifb name after 8 attempts");
  COLLIDE_RETURN_IF_ERROR(process::run_checked(netns_command(
      "ip", netns, {"link", "set", "dev", ifb_, "mtu", std::to_string(mtu), "up"})));
  std::vector<std::string> add = {"qdisc", "add", "dev", ifb_, "root", "handle",
                                  kCollideQdiscHandle, "tbf"};
  const auto args = tbf_args(spec);
  add.insert(add.end(), args.begin(), args.end());
  COLLIDE_RETURN_IF_ERROR(process::run_checked(netns_command("tc", netns, add)));

  // Then the redirect. The clsact goes with it only when collide created it.
  UndoAction undo;
  undo.description = fmt::format("{}{}: ingress redirect to {}", ifname,
                                 netns.empty() ? "" : " in " + netns, ifb_);
  undo.netns = netns;
  undo.devices = {ifname};
  undo.steps = {UndoStep::delete_ingress_redirect(ifname)};
  if (!have_ingress_hook) undo.steps.push_back(UndoStep::delete_clsact(ifname));
  auto id = guardian_.register_undo(undo);
  if (!id.ok()) return id.status();
  undo_ids_.push_back(*id);
  if (!have_ingress_hook) {
    COLLIDE_RETURN_IF_ERROR(
        process::run_checked(netns_command("tc", netns, {"qdisc", "add", "dev", ifname, "clsact"})));
  }
  return process::run_checked(netns_command(
      "tc", netns,
      {"filter", "add", "dev", ifname, "ingress", "protocol", "all", "pref",
       std::to_string(kCollideFilterPref), "u32", "match", "u32", "0", "0", "action", "mirred",
       "egress", "redirect", "dev", ifb_}));
}

RateLimit::~RateLimit() { remove(); }

void RateLimit::remove() {
  // Newest first: the redirect goes before the device it points at.
  while (!undo_ids_.empty()) {
    guardian_.undo(undo_ids_.back());
    undo_ids_.pop_back();
  }
}

}  // namespace collide::injectors
