#include "orchestrator/run/roofline.h"

#include <fmt/format.h>

#include "orchestrator/replay/transport_options.h"
#include "orchestrator/testbed/link_counters.h"
#include "orchestrator/testbed/link_names.h"
#include "replayer/collectives/expander.h"
#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

namespace coll = replayer::collectives;
namespace tb = testbed;

using NicKey = std::pair<uint32_t, uint32_t>;

// The namespace's role and index, by its name.
const tb::PlannedNamespace* namespace_of(const tb::TestbedPlan& plan, const std::string& name) {
  for (const tb::PlannedNamespace& n : plan.namespaces) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// The link a host NIC is cabled with (its `a` end is the NIC).
const tb::PlannedLink* link_of_nic(const tb::TestbedPlan& plan, const tb::HostNic& nic) {
  for (const tb::PlannedLink& l : plan.links) {
    if (l.a.netns == nic.netns && l.a.ifname == nic.ifname) return &l;
  }
  return nullptr;
}

// Keeps the slowest of the candidates: `bytes` through ports of `gbps` in all.
void consider(report::Roofline& best, const std::string& where, uint64_t bytes, double gbps) {
  if (bytes == 0 || gbps <= 0) return;  // nothing through it, or unshaped: it bounds nothing
  const double seconds = static_cast<double>(bytes) * 8 / (gbps * 1e9);
  if (seconds <= best.seconds) return;
  best = {seconds, where, bytes, gbps};
}

}  // namespace

NicPlaces nic_places(const tb::TestbedPlan& plan) {
  NicPlaces out;
  for (const tb::HostNic& nic : plan.nics) {
    const tb::PlannedLink* link = link_of_nic(plan, nic);
    const tb::PlannedNamespace* leaf = link ? namespace_of(plan, link->b.netns) : nullptr;
    if (leaf != nullptr && leaf->role == tb::Role::kLeaf) out.leaf[{nic.host, nic.nic}] = leaf->index;
  }
  for (const tb::PlannedNamespace& ns : plan.namespaces) {
    if (ns.role == tb::Role::kLeaf) out.pod_of_leaf[ns.index] = ns.pod;
  }
  return out;
}

Result<FabricLoad> fabric_load(const std::string& trace_path, const coll::Placement& placement,
                               const v1::TransportSettings& transport, const NicPlaces& places) {
  auto resolved = replay::resolve_transport(transport);
  if (!resolved.ok()) return resolved.status();
  auto reader = traces::TraceReader::open(trace_path);
  if (!reader.ok()) return reader.status();
  auto expander = coll::Expander::create((*reader)->header(), placement, resolved->expand);
  if (!expander.ok()) return expander.status();
  const uint32_t world = placement.world_size();
  const auto nic_of = [&](uint32_t rank) -> NicKey {
    return {placement.host_of_rank[rank], placement.nic_of_rank[rank]};
  };
  const auto leaf_of = [&](const NicKey& nic) -> Result<uint32_t> {
    auto it = places.leaf.find(nic);
    if (it == places.leaf.end()) {
      return invalid_argument(fmt::format("{} is cabled to no leaf", tb::host_nic_name(nic.first, nic.second)));
    }
    return it->second;
  };
  FabricLoad load;
  v1::Op op;
  while (true) {
    auto more = (*reader)->next(op);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (op.rank() >= world) {
      return invalid_argument(fmt::format("{}: op {} names rank {} of a {}-rank placement", trace_path,
                                          op.index(), op.rank(), world));
    }
    auto expanded = expander->expand(op);
    if (!expanded.ok()) return expanded.status();
    for (const coll::Step& s : expanded->steps) {
      if (s.kind != coll::StepKind::kSend || s.local) continue;
      if (s.peer >= world) return invalid_argument(fmt::format("op {} sends to rank {}", op.index(), s.peer));
      const NicKey from = nic_of(op.rank()), to = nic_of(s.peer);
      load.nic_sent[from] += s.bytes;
      load.nic_received[to] += s.bytes;
      auto from_leaf = leaf_of(from), to_leaf = leaf_of(to);
      if (!from_leaf.ok()) return from_leaf.status();
      if (!to_leaf.ok()) return to_leaf.status();
      if (*from_leaf == *to_leaf) continue;
      load.leaf_up[*from_leaf] += s.bytes;
      load.leaf_down[*to_leaf] += s.bytes;
      const auto from_pod = places.pod_of_leaf.find(*from_leaf), to_pod = places.pod_of_leaf.find(*to_leaf);
      if (from_pod == places.pod_of_leaf.end() || to_pod == places.pod_of_leaf.end() ||
          from_pod->second == to_pod->second) {
        continue;
      }
      load.pod_up[from_pod->second] += s.bytes;
      load.pod_down[to_pod->second] += s.bytes;
    }
  }
  return load;
}

report::Roofline roofline(const FabricLoad& load, const tb::TestbedPlan& plan) {
  report::Roofline best;
  for (const tb::HostNic& nic : plan.nics) {
    const tb::PlannedLink* link = link_of_nic(plan, nic);
    if (link == nullptr) continue;
    const std::string name = tb::host_nic_name(nic.host, nic.nic);
    if (auto it = load.nic_sent.find({nic.host, nic.nic}); it != load.nic_sent.end()) {
      consider(best, name + " send", it->second, link->a.queue.gbps);
    }
    if (auto it = load.nic_received.find({nic.host, nic.nic}); it != load.nic_received.end()) {
      consider(best, name + " receive", it->second, link->b.queue.gbps);
    }
  }
  // A leaf's uplinks as one group (perfect balance): their rates add up; one unshaped port makes
  // its direction unbounded (a rate of 0 bounds nothing).
  std::map<uint32_t, double> up_gbps, down_gbps;
  const auto add_rate = [](double& sum, double gbps) { sum = (gbps <= 0 || sum < 0) ? -1 : sum + gbps; };
  std::map<uint32_t, double> pod_up_gbps, pod_down_gbps;  // 3-tier: a pod's spines' uplinks
  for (const tb::PlannedLink& l : plan.links) {
    const report::FabricLink named = tb::name_link(plan, l);
    if (named.host_link) continue;
    if (named.spine_link) {
      add_rate(pod_up_gbps[named.pod], l.a.queue.gbps);
      add_rate(pod_down_gbps[named.pod], l.b.queue.gbps);
    } else {
      add_rate(up_gbps[named.leaf], l.a.queue.gbps);
      add_rate(down_gbps[named.leaf], l.b.queue.gbps);
    }
  }
  for (const auto& [pod, gbps] : pod_up_gbps) {
    if (auto it = load.pod_up.find(pod); it != load.pod_up.end()) {
      consider(best, fmt::format("pod{} spine uplinks", pod), it->second, gbps);
    }
    if (auto it = load.pod_down.find(pod); it != load.pod_down.end()) {
      consider(best, fmt::format("super-spines to pod{}", pod), it->second, pod_down_gbps[pod]);
    }
  }
  for (const auto& [leaf, gbps] : up_gbps) {
    if (auto it = load.leaf_up.find(leaf); it != load.leaf_up.end()) {
      consider(best, fmt::format("leaf{} uplinks", leaf), it->second, gbps);
    }
    if (auto it = load.leaf_down.find(leaf); it != load.leaf_down.end()) {
      consider(best, fmt::format("spines to leaf{}", leaf), it->second, down_gbps[leaf]);
    }
  }
  return best;
}

}  // namespace collide::orchestrator
