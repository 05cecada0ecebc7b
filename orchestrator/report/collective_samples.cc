#include "orchestrator/report/collective_samples.h"

#include <map>
#include <random>
#include <tuple>

#include "replayer/collectives/accounting.h"

namespace collide::orchestrator::report {

std::vector<CollectiveSamples> sample_collective_times(const std::vector<CollectiveTime>& collectives,
                                                       uint32_t repetition, size_t cap) {
  // Keyed as the size table is (nccl-tests' S depends on the communicator's size).
  using Key = std::tuple<int, uint64_t, int, int>;
  std::map<Key, CollectiveSamples> rows;
  std::map<Key, std::mt19937_64> rngs;
  for (const CollectiveTime& c : collectives) {
    if (c.failed) continue;
    const uint64_t bytes = replayer::collectives::nccl_tests_size(c.kind, c.comm_size, c.bytes);
    const Key key{c.kind, bytes, c.datatype, c.reduce_op};
    auto [it, fresh] = rows.try_emplace(key);
    CollectiveSamples& row = it->second;
    if (fresh) {
      row.kind = c.kind;
      row.bytes = bytes;
      row.datatype = c.datatype;
      row.reduce_op = c.reduce_op;
      row.cap = cap;
    }
    const double us = c.seconds() * 1e6;
    ++row.count;
    if (row.times_us.size() < cap) {
      row.times_us.push_back(us);
      continue;
    }
    // Reservoir sampling (Algorithm R): the n-th time replaces a kept one with probability cap/n,
    // which leaves every time equally likely to be kept.
    row.sampled = true;
    auto [rng, made] = rngs.try_emplace(key, (static_cast<uint64_t>(repetition) << 40) ^
                                                 (static_cast<uint64_t>(c.kind) << 32) ^ bytes);
    std::uniform_int_distribution<uint64_t> pick(0, row.count - 1);
    const uint64_t slot = pick(rng->second);
    if (slot < cap) row.times_us[slot] = us;
  }
  std::vector<CollectiveSamples> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

}  // namespace collide::orchestrator::report
