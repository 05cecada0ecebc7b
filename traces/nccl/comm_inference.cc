#include "traces/nccl/comm_inference.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace collide::traces::nccl {
namespace {

struct Cluster {
  int32_t nranks = -1;
  std::vector<uint32_t> members;                 // sightings, in process order
  std::vector<uint32_t> processes;               // theirs, sorted
  // What its members showed, by opCount and place within it.
  std::map<std::pair<uint64_t, uint32_t>, CollKey> by_op;
};

bool has_process(const Cluster& c, uint32_t process) {
  return std::binary_search(c.processes.begin(), c.processes.end(), process);
}

// Whether every collective of `s` matches what the cluster showed at its opCount.
bool agrees(const Cluster& c, const CommSighting& s) {
  for (const CollKey& k : s.colls) {
    const auto it = c.by_op.find({k.op_count, k.occurrence});
    if (it == c.by_op.end()) continue;
    const CollKey& seen = it->second;
    if (seen.kind != k.kind || seen.count != k.count || seen.datatype != k.datatype) return false;
  }
  return true;
}

void join(Cluster& c, uint32_t index, const CommSighting& s) {
  c.members.push_back(index);
  c.processes.insert(std::upper_bound(c.processes.begin(), c.processes.end(), s.process),
                     s.process);
  for (const CollKey& k : s.colls) c.by_op.emplace(std::make_pair(k.op_count, k.occurrence), k);
}

// Whether two sightings show at least one collective at the same opCount and place, and all
// they both show match.
bool same_collectives(const CommSighting& a, const CommSighting& b) {
  std::map<std::pair<uint64_t, uint32_t>, const CollKey*> of_a;
  for (const CollKey& k : a.colls) of_a.emplace(std::make_pair(k.op_count, k.occurrence), &k);
  bool shared = false;
  for (const CollKey& k : b.colls) {
    const auto it = of_a.find({k.op_count, k.occurrence});
    if (it == of_a.end()) continue;
    const CollKey& o = *it->second;
    if (o.kind != k.kind || o.count != k.count || o.datatype != k.datatype) return false;
    shared = true;
  }
  return shared;
}

}  // namespace

InferredLayout infer_comms(const std::vector<CommSighting>& sightings, uint32_t processes) {
  std::vector<uint32_t> order(sightings.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return sightings[a].process < sightings[b].process;
  });
  std::vector<Cluster> clusters;
  for (uint32_t i : order) {
    const CommSighting& s = sightings[i];
    Cluster* home = nullptr;
    for (Cluster& c : clusters) {
      if (c.nranks != s.nranks || has_process(c, s.process)) continue;
      if (s.nranks > 0 && c.members.size() >= static_cast<size_t>(s.nranks)) continue;
      if (!agrees(c, s)) continue;
      home = &c;
      break;
    }
    if (home == nullptr) {
      home = &clusters.emplace_back();
      home->nranks = s.nranks;
    }
    join(*home, i, s);
  }
  // In order of first sighting, as communicators with init lines are.
  std::vector<uint32_t> first(clusters.size());
  for (size_t c = 0; c < clusters.size(); ++c) {
    first[c] = *std::min_element(clusters[c].members.begin(), clusters[c].members.end());
  }
  std::vector<uint32_t> by_first(clusters.size());
  std::iota(by_first.begin(), by_first.end(), 0u);
  std::sort(by_first.begin(), by_first.end(),
            [&](uint32_t a, uint32_t b) { return first[a] < first[b]; });

  InferredLayout out;
  auto size_of = [](const Cluster& c) {
    return c.nranks > 0 ? static_cast<uint32_t>(c.nranks)
                        : static_cast<uint32_t>(c.members.size());
  };
  int world = -1;
  for (uint32_t c : by_first) {
    if (world < 0 || size_of(clusters[c]) > size_of(clusters[static_cast<size_t>(world)])) {
      world = static_cast<int>(c);
    }
  }
  out.rank.assign(processes, UINT32_MAX);
  uint32_t next = 0;
  if (world >= 0) {
    for (uint32_t p : clusters[static_cast<size_t>(world)].processes) out.rank[p] = next++;
  }
  for (uint32_t p = 0; p < processes; ++p) {
    if (out.rank[p] == UINT32_MAX) out.rank[p] = next++;
  }
  out.world_size = next;
  if (world >= 0) {
    out.world_size = std::max(out.world_size, size_of(clusters[static_cast<size_t>(world)]));
  }
  for (uint32_t c : by_first) {
    const Cluster& cl = clusters[c];
    InferredComm& comm = out.comms.emplace_back();
    comm.nranks = size_of(cl);
    comm.sightings = cl.members;
    if (static_cast<int>(c) == world) out.world = static_cast<uint32_t>(out.comms.size() - 1);
    std::stable_sort(comm.sightings.begin(), comm.sightings.end(), [&](uint32_t a, uint32_t b) {
      return out.rank[sightings[a].process] < out.rank[sightings[b].process];
    });
    if (world >= 0 && static_cast<int>(c) != world &&
        comm.nranks == size_of(clusters[static_cast<size_t>(world)])) {
      const Cluster& w = clusters[static_cast<size_t>(world)];
      const bool disjoint = std::none_of(cl.processes.begin(), cl.processes.end(),
                                         [&](uint32_t p) { return has_process(w, p); });
      if (disjoint) out.other_worlds.push_back(static_cast<uint32_t>(out.comms.size() - 1));
    }
  }
  // Pointers of one process (sightings are in process order) that look like one communicator.
  for (size_t a = 0; a < order.size(); ++a) {
    const CommSighting& x = sightings[order[a]];
    bool found = false;
    for (size_t b = a + 1; b < order.size() && sightings[order[b]].process == x.process; ++b) {
      const CommSighting& y = sightings[order[b]];
      if (x.nranks == y.nranks && same_collectives(x, y)) found = true;
    }
    if (found && (out.several_devices.empty() || out.several_devices.back() != x.process)) {
      out.several_devices.push_back(x.process);
    }
  }
  return out;
}

}  // namespace collide::traces::nccl
