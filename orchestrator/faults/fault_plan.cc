#include "orchestrator/faults/fault_plan.h"

#include <regex>

#include <fmt/format.h>

#include "orchestrator/faults/storm_options.h"
#include "orchestrator/testbed/link_names.h"

namespace collide::orchestrator::faults {
namespace {

using injectors::Direction;

std::vector<Direction> directions_of(v1::Fault::Direction d, Direction toward_host,
                                     Direction from_host) {
  switch (d) {
    case v1::Fault::DIRECTION_TO_HOST: return {toward_host};
    case v1::Fault::DIRECTION_FROM_HOST: return {from_host};
    default: return {toward_host, from_host};
  }
}

std::string ns_text(uint64_t ns) { return fmt::format("{}ns", ns); }

}  // namespace

Result<FaultSite> resolve_site(const testbed::TestbedPlan& plan, const std::string& link,
                               v1::Fault::Direction direction) {
  // A fabric link by its two switches, the lower first: "leaf0-spine1", 3-tier "spine2-super0".
  static const std::regex kFabric(R"((leaf\d+)-(spine\d+)|(spine\d+)-(super\d+))");
  std::smatch m;
  FaultSite site;
  auto host_link = testbed::parse_host_link(link);
  if (!host_link.ok()) return host_link.status();
  if (host_link->has_value()) {
    const testbed::HostLinkName& name = **host_link;
    uint32_t hosts = 0, nics = 0;
    for (const testbed::HostNic& n : plan.nics) {
      hosts = std::max(hosts, n.host + 1);
      nics = std::max(nics, n.nic + 1);
    }
    COLLIDE_RETURN_IF_ERROR(testbed::check_host_link(link, name, hosts, nics));
    site.host_link = true;
    site.host = name.host;
    site.nic = name.nic;
    const std::string host_ns = testbed::host_namespace(plan.name, site.host);
    const std::string nic = fmt::format("eth{}", site.nic);
    for (const testbed::PlannedLink& l : plan.links) {
      if (l.a.netns != host_ns || l.a.ifname != nic) continue;
      site.leaf_netns = l.b.netns;
      site.leaf_ifname = l.b.ifname;
      site.peer_netns = l.a.netns;
      site.peer_ifname = l.a.ifname;
      for (Direction d : directions_of(direction, Direction::kEgress, Direction::kIngress)) {
        site.hooks.push_back({l.b.netns, l.b.ifname, d});
      }
      return site;
    }
  } else if (std::regex_match(link, m, kFabric)) {
    const bool upper_tier = m[3].matched;
    const std::string leaf_ns = fmt::format("{}-{}", plan.name, m[upper_tier ? 3 : 1].str());
    const std::string spine_ns = fmt::format("{}-{}", plan.name, m[upper_tier ? 4 : 2].str());
    for (const testbed::PlannedLink& l : plan.links) {
      if (l.a.netns != leaf_ns || l.b.netns != spine_ns) continue;
      site.leaf_netns = l.a.netns;
      site.leaf_ifname = l.a.ifname;
      site.peer_netns = l.b.netns;
      site.peer_ifname = l.b.ifname;
      for (Direction d : directions_of(direction, Direction::kIngress, Direction::kEgress)) {
        site.hooks.push_back({l.a.netns, l.a.ifname, d});
      }
      return site;
    }
  }
  return not_found(fmt::format("no link '{}' in testbed {}", link, plan.name));
}

bool is_replayer_fault(const v1::Fault& f) {
  return f.kind() == v1::Fault::KIND_SLOW_RECEIVER || f.kind() == v1::Fault::KIND_SEND_DELAY;
}

bool is_packet_fault(const v1::Fault& f) {
  switch (f.kind()) {
    case v1::Fault::KIND_LOSS:
    case v1::Fault::KIND_BURST_LOSS:
    case v1::Fault::KIND_BLACKHOLE:
    case v1::Fault::KIND_CORRUPT:
    case v1::Fault::KIND_ECN_MARK: return true;
    default: return false;
  }
}

std::string kind_name(v1::Fault::Kind kind) {
  switch (kind) {
    case v1::Fault::KIND_LOSS: return "loss";
    case v1::Fault::KIND_BURST_LOSS: return "burst-loss";
    case v1::Fault::KIND_BLACKHOLE: return "blackhole";
    case v1::Fault::KIND_LINK_FLAP: return "link-flap";
    case v1::Fault::KIND_RATE_LIMIT: return "rate-limit";
    case v1::Fault::KIND_CORRUPT: return "corrupt";
    case v1::Fault::KIND_ECN_MARK: return "ecn-mark";
    case v1::Fault::KIND_SLOW_RECEIVER: return "slow-receiver";
    case v1::Fault::KIND_SEND_DELAY: return "send-delay";
    case v1::Fault::KIND_PFC_STORM: return "pfc-storm";
    default: return "unspecified";
  }
}

uint64_t draw_seed(uint64_t fault_seed, uint64_t runs_seed, uint32_t repetition) {
  uint64_t mixed = 0;
  if (runs_seed != 0) {
    // SplitMix64's finalizer (Steele, Lea, Flood 2014).
    mixed = runs_seed + 0x9e3779b97f4a7c15ull;
    mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9ull;
    mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111ebull;
    mixed ^= mixed >> 31;
  }
  return fault_seed + repetition + mixed;
}

Result<StormPlan> storm_plan(const v1::Fault& f, const FaultSite& site) {
  if (f.kind() != v1::Fault::KIND_PFC_STORM) {
    return invalid_argument(fmt::format("fault {} is not a PFC storm", f.name()));
  }
  StormPlan plan;
  // A host link's storm comes from the host's NIC; a fabric link's from the leaf's port (its
  // peer, the spine's port, is the one paused). A real host's own NIC is named as the leaf end.
  const bool from_host_nic = site.host_link && !site.own_nic;
  plan.netns = from_host_nic ? site.peer_netns : site.leaf_netns;
  plan.ifname = from_host_nic ? site.peer_ifname : site.leaf_ifname;
  auto options = storm_options(f);
  if (!options.ok()) return options.status().with_context("fault " + f.name());
  plan.options = *options;
  return plan;
}

Result<injectors::FaultRule> packet_rule(const v1::Fault& f, uint32_t repetition,
                                         std::chrono::nanoseconds shift, uint64_t runs_seed) {
  using injectors::Action;
  using injectors::Decider;
  injectors::FaultRule rule;
  rule.description = fmt::format("{} ({})", f.name(), kind_name(f.kind()));
  rule.seed = draw_seed(f.seed(), runs_seed, repetition);
  rule.log_events = false;  // counters are the ground truth; a ring per packet costs CPU
  if (f.roce_only()) {
    rule.match.l4_proto = 17;
    rule.match.dport = {4791, 4791};
  }
  switch (f.kind()) {
    case v1::Fault::KIND_LOSS:
      rule.decider = Decider::kBernoulli;
      rule.probability = f.probability();
      break;
    case v1::Fault::KIND_BURST_LOSS: {
      // Gilbert's two states (every packet lost in the bad one, none in the good one): bursts
      // last 1/r packets on average and the bad state holds p/(p+r) of the time.
      if (f.mean_burst() < 1 || f.probability() <= 0 || f.probability() >= 1) {
        return invalid_argument(fmt::format(
            "fault {}: burst loss needs 0 < probability < 1 and a mean burst of at least 1",
            f.name()));
      }
      rule.decider = Decider::kGilbert;
      rule.gilbert.r = 1.0 / f.mean_burst();
      rule.gilbert.p = rule.gilbert.r * f.probability() / (1 - f.probability());
      if (rule.gilbert.p > 1) {
        return invalid_argument(fmt::format(
            "fault {}: a loss rate of {} with bursts of {} packets is not a Gilbert model",
            f.name(), f.probability(), f.mean_burst()));
      }
      rule.gilbert.h = 0;
      rule.gilbert.k = 1;
      break;
    }
    case v1::Fault::KIND_BLACKHOLE: rule.decider = Decider::kAlways; break;
    case v1::Fault::KIND_CORRUPT:
      rule.decider = Decider::kBernoulli;
      rule.probability = f.probability();
      rule.action = Action::kCorrupt;
      // A RoCE NIC checks the ICRC, not the UDP checksum: keep the latter right so the frame
      // reaches the receiver, which must catch the damage itself.
      rule.corrupt_silent = true;
      break;
    case v1::Fault::KIND_ECN_MARK:
      rule.decider = Decider::kBernoulli;
      rule.probability = f.probability();
      rule.action = Action::kEcnCe;
      break;
    default:
      return invalid_argument(
          fmt::format("fault {}: {} is not a per-packet fault", f.name(), kind_name(f.kind())));
  }
  // Windows count from arming; shifted so they count from the run's start instead.
  const auto start = std::chrono::nanoseconds(f.start_ns()) + shift;
  const auto end = start + std::chrono::nanoseconds(f.duration_ns());
  if (f.duration_ns() != 0 && end.count() <= 0) {
    return failed_precondition(fmt::format("fault {}: its window was over before it was armed",
                                           f.name()));
  }
  // A window that began before arming begins at once (a zero start), and stays as long as it
  // was meant to last from the run's start. (A zero end leaves it open.)
  rule.window.start = std::max(start, std::chrono::nanoseconds(0));
  rule.window.end = f.duration_ns() == 0 ? std::chrono::nanoseconds(0) : end;
  COLLIDE_RETURN_IF_ERROR(injectors::validate_rule(rule));
  return rule;
}

Result<SplitFaults> split_faults(const std::vector<const v1::Fault*>& faults,
                                 const testbed::TestbedPlan& plan) {
  SplitFaults split;
  for (const v1::Fault* f : faults) {
    auto site = resolve_site(plan, f->link(), f->direction());
    if (!site.ok()) return site.status().with_context("fault " + f->name());
    if (site->host_link) {
      split.by_host[site->host].push_back(f);
    } else {
      split.fabric.push_back(f);
    }
  }
  return split;
}

std::vector<const v1::Fault*> replayer_faults_of_host(const std::vector<const v1::Fault*>& faults,
                                                     uint32_t host) {
  std::vector<const v1::Fault*> mine;
  for (const v1::Fault* f : faults) {
    if (!is_replayer_fault(*f)) continue;
    // A name that does not read (a host number too large for any testbed) names none of its hosts.
    auto name = testbed::parse_host_link(f->link());
    if (!name.ok() || !name->has_value() || (*name)->host != host) continue;
    mine.push_back(f);
  }
  return mine;
}

v1::HookWindowSpec replayer_hook_window(const v1::Fault& f) {
  v1::HookWindowSpec w;
  w.set_start_ns(f.start_ns());
  w.set_duration_ns(f.duration_ns());
  w.set_delay_ns(f.delay_ns());
  auto named = testbed::parse_host_link(f.link());
  if (named.ok() && named->has_value() && (*named)->nic_named) w.set_nic((*named)->nic);
  return w;
}

std::vector<std::string> replayer_hook_flags(const std::vector<const v1::Fault*>& faults,
                                             uint32_t host) {
  std::vector<std::string> flags;
  for (const v1::Fault* f : replayer_faults_of_host(faults, host)) {
    if (f->kind() == v1::Fault::KIND_SLOW_RECEIVER) {
      flags.push_back(fmt::format("--drain-pause={}:{}", ns_text(f->start_ns()),
                                  ns_text(f->duration_ns())));
    } else {
      flags.push_back(fmt::format("--send-delay={}:{}:{}", ns_text(f->start_ns()),
                                  ns_text(f->duration_ns()), ns_text(f->delay_ns())));
    }
  }
  return flags;
}

}  // namespace collide::orchestrator::faults
