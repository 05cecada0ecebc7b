#include "injectors/sweep.h"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/parse_number.h"
#include "common/process.h"
#include "injectors/guardian.h"
#include "injectors/rate_limit.h"
#include "injectors/state_sweep.h"
#include "injectors/tc_link.h"

namespace collide::injectors {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json parse_list(const std::string& text) {
  try {
    json j = json::parse(text);
    return j.is_array() ? j : json::array();
  } catch (const json::exception&) {
    return json::array();
  }
}

std::string field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string where(const std::string& netns) {
  return netns.empty() ? "host" : "netns " + netns;
}

using Owned = std::set<std::pair<std::string, std::string>>;  // (netns, device)

std::string run_output(const std::vector<std::string>& argv) {
  auto result = process::run_command(argv);
  if (!result.ok() || result->exit_code != 0) return "[]";
  return result->output;
}

std::vector<std::string> all_namespaces() {
  std::vector<std::string> names = {""};
  for (const json& ns : parse_list(run_output({"ip", "-j", "netns", "list"}))) {
    if (const std::string name = field(ns, "name"); !name.empty()) names.push_back(name);
  }
  return names;
}

void remove_leftover(const Leftover& leftover, const Owned& live, SweepReport& report) {
  const std::string text =
      fmt::format("{} on {} in {}", leftover.what, leftover.device, where(leftover.netns));
  if (live.contains({leftover.netns, leftover.device})) {
    report.kept.push_back(text + " (a running collide process owns it)");
    return;
  }
  auto result = process::run_command(leftover.command);
  if (!result.ok()) {
    report.errors.push_back(fmt::format("{}: {}", text, result.status().message()));
  } else if (result->exit_code != 0) {
    std::string output = result->output;
    while (!output.empty() && output.back() == '\n') output.pop_back();
    report.errors.push_back(fmt::format("{}: `{}`: {}", text, fmt::join(leftover.command, " "),
                                        output));
  } else {
    report.removed.push_back(text);
  }
}

void sweep_namespace(const std::string& netns, const Owned& live, SweepReport& report) {
  const json links = parse_list(run_output(netns_command("ip", netns, {"-d", "-j", "link", "show"})));
  for (const json& link : links) {
    const std::string dev = field(link, "ifname");
    if (dev.empty()) continue;
    const std::string qdisc_json = run_output(netns_command("tc", netns, {"-j", "qdisc", "show", "dev", dev}));
    bool filters_removed = false;
    for (const char* direction : {"ingress", "egress"}) {
      const auto leftovers = collide_filters(
          netns, dev, direction,
          run_output(netns_command("tc", netns, {"-j", "filter", "show", "dev", dev, direction})));
      for (const Leftover& leftover : leftovers) {
        const size_t before = report.removed.size();
        remove_leftover(leftover, live, report);
        filters_removed |= report.removed.size() > before;
      }
    }
    for (const Leftover& leftover : collide_qdiscs(netns, dev, qdisc_json)) {
      remove_leftover(leftover, live, report);
    }
    if (filters_removed) {
      // A clsact with nothing left in it does nothing; it was most likely collide's.
      const bool empty =
          parse_list(run_output(netns_command("tc", netns, {"-j", "filter", "show", "dev", dev,
                                                            "ingress"}))).empty() &&
          parse_list(run_output(netns_command("tc", netns, {"-j", "filter", "show", "dev", dev,
                                                            "egress"}))).empty();
      if (empty) {
        remove_leftover(Leftover{netns, dev, "empty clsact",
                                 netns_command("tc", netns, {"qdisc", "del", "dev", dev, "clsact"})},
                        live, report);
      }
    }
  }
  for (const Leftover& leftover : collide_ifbs(netns, links.dump())) {
    remove_leftover(leftover, live, report);
  }
}

int count_tcx_links() {
  auto result = process::run_command({"bpftool", "-j", "link", "show"});
  if (!result.ok() || result->exit_code != 0) return -1;
  int count = 0;
  for (const json& link : parse_list(result->output)) {
    auto type = link.find("type");
    if (type == link.end()) continue;
    // bpftool 7.1 predates TCX and prints its link type (11) as a number.
    if ((type->is_string() && type->get<std::string>() == "tcx") ||
        (type->is_number() && type->get<int>() == 11)) {
      ++count;
    }
  }
  return count;
}

}  // namespace

std::vector<Leftover> collide_qdiscs(const std::string& netns, const std::string& device,
                                     const std::string& qdisc_json) {
  std::vector<Leftover> out;
  for (const json& q : parse_list(qdisc_json)) {
    if (!q.is_object() || field(q, "handle") != kCollideQdiscHandle) continue;
    std::vector<std::string> args = {"qdisc", "del", "dev", device};
    if (q.value("root", false)) {
      args.push_back("root");
    } else {
      const std::string parent = field(q, "parent");
      if (parent.empty()) continue;
      args.insert(args.end(), {"parent", parent});
    }
    args.insert(args.end(), {"handle", kCollideQdiscHandle});
    out.push_back(Leftover{netns, device, fmt::format("qdisc {} ({})", kCollideQdiscHandle,
                                                      field(q, "kind")),
                           netns_command("tc", netns, std::move(args))});
  }
  return out;
}

std::vector<Leftover> collide_filters(const std::string& netns, const std::string& device,
                                      const std::string& direction,
                                      const std::string& filter_json) {
  std::vector<Leftover> out;
  std::set<unsigned> u32_prefs;
  const std::string bpf_handle = fmt::format("{:#x}", TcLink::kCollideTcHandle);
  for (const json& f : parse_list(filter_json)) {
    if (!f.is_object()) continue;
    const unsigned pref = f.value("pref", 0u);
    const std::string kind = field(f, "kind");
    if (kind == "u32" && pref == kCollideFilterPref && direction == "ingress") {
      // u32 prints its hash table and each node as separate entries: one deletion for the pref.
      if (u32_prefs.insert(pref).second) {
        out.push_back(Leftover{netns, device, fmt::format("{} u32 filter pref {}", direction, pref),
                               netns_command("tc", netns, {"filter", "del", "dev", device,
                                                           direction, "pref",
                                                           std::to_string(pref)})});
      }
    } else if (kind == "bpf") {
      auto options = f.find("options");
      if (options == f.end() || !options->is_object() || field(*options, "handle") != bpf_handle) {
        continue;
      }
      std::string name = field(*options, "bpf_name");
      out.push_back(Leftover{
          netns, device,
          fmt::format("{} bpf filter pref {} handle {}{}", direction, pref, bpf_handle,
                      name.empty() ? "" : " (" + name + ")"),
          netns_command("tc", netns, {"filter", "del", "dev", device, direction, "pref",
                                      std::to_string(pref), "handle", bpf_handle, "bpf"})});
    }
  }
  return out;
}

std::vector<Leftover> collide_ifbs(const std::string& netns, const std::string& link_json) {
  static const std::regex kIfbName(std::string(kCollideIfbPrefix) + R"(\d+)");
  std::vector<Leftover> out;
  for (const json& link : parse_list(link_json)) {
    const std::string name = field(link, "ifname");
    if (!std::regex_match(name, kIfbName)) continue;
    // With `ip -d`, the kind is known: leave a same-named device of another kind alone.
    if (auto info = link.find("linkinfo"); info != link.end() && info->is_object() &&
                                           field(*info, "info_kind") != "ifb") {
      continue;
    }
    out.push_back(Leftover{netns, name, "ifb device",
                           netns_command("ip", netns, {"link", "del", "dev", name})});
  }
  return out;
}

Result<SweepReport> sweep(const SweepOptions& options) {
  SweepReport report;
  StateSweepReport state =
      sweep_state(options.state_dir.empty() ? default_state_dir() : options.state_dir);
  report.removed = std::move(state.removed);
  report.kept = std::move(state.kept);
  report.errors = std::move(state.errors);
  const Owned& live = state.live_devices;
  const std::vector<std::string> namespaces =
      options.namespaces ? *options.namespaces : all_namespaces();
  for (const std::string& netns : namespaces) {
    if (!netns.empty() && !fs::exists("/run/netns/" + netns)) {
      report.errors.push_back(fmt::format("no network namespace {}", netns));
      continue;
    }
    sweep_namespace(netns, live, report);
  }
  report.tcx_links = count_tcx_links();
  logging::get("faults")->info("sweep: {} removed, {} kept, {} errors", report.removed.size(),
                               report.kept.size(), report.errors.size());
  return report;
}

std::vector<std::string> describe(const SweepReport& report) {
  std::vector<std::string> lines;
  for (const std::string& s : report.removed) lines.push_back("removed " + s);
  for (const std::string& s : report.kept) lines.push_back("kept " + s);
  for (const std::string& s : report.errors) lines.push_back("error " + s);
  std::string tcx = report.tcx_links < 0
                        ? "TCX links: unknown (bpftool unavailable)"
                        : fmt::format("{} TCX link(s) attached on this host, all held by running "
                                      "processes (the kernel removes a TCX link with its owner)",
                                      report.tcx_links);
  lines.push_back(fmt::format("sweep: removed {}, kept {}, errors {}; {}", report.removed.size(),
                              report.kept.size(), report.errors.size(), tcx));
  return lines;
}

}  // namespace collide::injectors
