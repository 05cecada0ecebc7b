#include "orchestrator/report/collective_tally.h"

#include <utility>

#include "orchestrator/report/report.h"
#include "orchestrator/report/statistics.h"
#include "replayer/collectives/accounting.h"

namespace collide::orchestrator::report {
namespace {

namespace coll = replayer::collectives;

// Points of the CDF the HTML report draws when the times themselves are not kept.
constexpr int kCdfPoints = 1000;

// What a summary reads from a set of times, kept exactly (every value) or streamed (a histogram).
uint64_t count_of(const std::vector<double>& times) { return times.size(); }
uint64_t count_of(const LogHistogram& times) { return times.count(); }
double quantile_of(const std::vector<double>& times, double q) { return quantile(times, q); }
double quantile_of(const LogHistogram& times, double q) { return times.quantile(q); }

// The summary's quantiles, size table and production rows, from times of either kind (a q of 1
// is the maximum for both).
template <typename Times, typename SizeKey>
void fill(VariantSummary& v, const Times& all, const std::map<SizeKey, Times>& sizes,
          const std::map<int, std::pair<Times, Times>>& production) {
  v.collective_count = count_of(all);
  v.p50_us = quantile_of(all, 0.5);
  v.p99_us = quantile_of(all, 0.99);
  v.p999_us = quantile_of(all, 0.999);
  v.max_us = quantile_of(all, 1.0);
  for (const auto& [key, times] : sizes) {
    const auto& [kind, bytes, n, datatype, reduce_op] = key;
    SizeRow row;
    row.kind = static_cast<v1::OpKind>(kind);
    row.bytes = coll::nccl_tests_size(row.kind, n, bytes);
    row.datatype = static_cast<v1::DataType>(datatype);
    row.reduce_op = static_cast<v1::ReduceOp>(reduce_op);
    row.count = count_of(times);
    row.p50_us = quantile_of(times, 0.5);
    row.p99_us = quantile_of(times, 0.99);
    row.max_us = quantile_of(times, 1.0);
    row.algbw_gbytes = row.p50_us > 0 ? static_cast<double>(row.bytes) / (row.p50_us * 1e3) : 0;
    row.busbw_gbytes = row.algbw_gbytes * coll::busbw_factor(row.kind, n);
    v.sizes.push_back(row);
  }
  for (const auto& [kind, times] : production) {
    const auto& [produced, replayed] = times;
    ProductionRow row;
    row.kind = static_cast<v1::OpKind>(kind);
    row.count = count_of(produced);
    row.production_p50_us = quantile_of(produced, 0.5);
    row.production_p99_us = quantile_of(produced, 0.99);
    row.replay_p50_us = quantile_of(replayed, 0.5);
    row.replay_p99_us = quantile_of(replayed, 0.99);
    v.production.push_back(row);
  }
}

}  // namespace

void CollectiveTally::add(const CollectiveTime& c) {
  if (c.failed) return;
  if (!streaming_ && exact_.size() < cap_) {
    exact_.push_back(c);
    return;
  }
  if (!streaming_) {
    streaming_ = true;
    for (const CollectiveTime& kept : exact_) stream(kept);
    exact_.clear();
    exact_.shrink_to_fit();
  }
  stream(c);
}

void CollectiveTally::stream(const CollectiveTime& c) {
  const double us = c.seconds() * 1e6;
  streams_.all_us.add(us);
  streams_.sizes_us[{c.kind, c.bytes, c.comm_size, c.datatype, c.reduce_op}].add(us);
  if (c.production_ns != 0) {
    auto& [production, replay] = streams_.production_us[c.kind];
    production.add(static_cast<double>(c.production_ns) / 1e3);
    replay.add(us);
  }
}

void CollectiveTally::summarize(VariantSummary& v) const {
  v.collective_us.clear();
  v.sizes.clear();
  v.production.clear();
  if (streaming_) {
    for (int i = 1; i <= kCdfPoints; ++i) {
      v.collective_us.push_back(streams_.all_us.quantile(static_cast<double>(i) / kCdfPoints));
    }
    fill(v, streams_.all_us, streams_.sizes_us, streams_.production_us);
    return;
  }
  std::vector<double> all;
  std::map<SizeKey, std::vector<double>> sizes;
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> production;  // by kind
  for (const CollectiveTime& c : exact_) {
    const double us = c.seconds() * 1e6;
    all.push_back(us);
    sizes[{c.kind, c.bytes, c.comm_size, c.datatype, c.reduce_op}].push_back(us);
    if (c.production_ns != 0) {
      auto& [produced, replayed] = production[c.kind];
      produced.push_back(static_cast<double>(c.production_ns) / 1e3);
      replayed.push_back(us);
    }
  }
  fill(v, all, sizes, production);
  v.collective_us = std::move(all);
}

}  // namespace collide::orchestrator::report
