#include "orchestrator/report/collective_tally.h"

#include "orchestrator/report/report.h"
#include "orchestrator/report/statistics.h"
#include "replayer/collectives/accounting.h"

namespace collide::orchestrator::report {
namespace {

namespace coll = replayer::collectives;

// Points of the CDF the HTML report draws when the times themselves are not kept.
constexpr int kCdfPoints = 1000;

SizeRow size_row(int kind, uint64_t bytes, uint32_t n, int datatype, int reduce_op) {
  SizeRow row;
  row.kind = static_cast<v1::OpKind>(kind);
  row.bytes = coll::nccl_tests_size(row.kind, n, bytes);
  row.datatype = static_cast<v1::DataType>(datatype);
  row.reduce_op = static_cast<v1::ReduceOp>(reduce_op);
  return row;
}

void set_bandwidth(SizeRow& row, uint32_t n) {
  row.algbw_gbytes = row.p50_us > 0 ? static_cast<double>(row.bytes) / (row.p50_us * 1e3) : 0;
  row.busbw_gbytes = row.algbw_gbytes * coll::busbw_factor(row.kind, n);
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
    const LogHistogram& all = streams_.all_us;
    v.collective_count = all.count();
    for (int i = 1; i <= kCdfPoints; ++i) v.collective_us.push_back(all.quantile(static_cast<double>(i) / kCdfPoints));
    v.p50_us = all.quantile(0.5);
    v.p99_us = all.quantile(0.99);
    v.p999_us = all.quantile(0.999);
    v.max_us = all.max();
    for (const auto& [key, times] : streams_.sizes_us) {
      const auto& [kind, bytes, n, datatype, reduce_op] = key;
      SizeRow row = size_row(kind, bytes, n, datatype, reduce_op);
      row.count = times.count();
      row.p50_us = times.quantile(0.5);
      row.p99_us = times.quantile(0.99);
      row.max_us = times.max();
      set_bandwidth(row, n);
      v.sizes.push_back(row);
    }
    for (const auto& [kind, times] : streams_.production_us) {
      const auto& [production, replay] = times;
      ProductionRow row;
      row.kind = static_cast<v1::OpKind>(kind);
      row.count = production.count();
      row.production_p50_us = production.quantile(0.5);
      row.production_p99_us = production.quantile(0.99);
      row.replay_p50_us = replay.quantile(0.5);
      row.replay_p99_us = replay.quantile(0.99);
      v.production.push_back(row);
    }
    return;
  }
  std::map<SizeKey, std::vector<double>> sizes;
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> production;  // by kind
  for (const CollectiveTime& c : exact_) {
    const double us = c.seconds() * 1e6;
    v.collective_us.push_back(us);
    sizes[{c.kind, c.bytes, c.comm_size, c.datatype, c.reduce_op}].push_back(us);
    if (c.production_ns != 0) {
      auto& [p, r] = production[c.kind];
      p.push_back(static_cast<double>(c.production_ns) / 1e3);
      r.push_back(us);
    }
  }
  v.collective_count = v.collective_us.size();
  v.p50_us = quantile(v.collective_us, 0.5);
  v.p99_us = quantile(v.collective_us, 0.99);
  v.p999_us = quantile(v.collective_us, 0.999);
  v.max_us = quantile(v.collective_us, 1.0);
  for (const auto& [key, times] : sizes) {
    const auto& [kind, bytes, n, datatype, reduce_op] = key;
    SizeRow row = size_row(kind, bytes, n, datatype, reduce_op);
    row.count = times.size();
    row.p50_us = quantile(times, 0.5);
    row.p99_us = quantile(times, 0.99);
    row.max_us = quantile(times, 1.0);
    set_bandwidth(row, n);
    v.sizes.push_back(row);
  }
  for (const auto& [kind, times] : production) {
    const auto& [p, r] = times;
    ProductionRow row;
    row.kind = static_cast<v1::OpKind>(kind);
    row.count = p.size();
    row.production_p50_us = quantile(p, 0.5);
    row.production_p99_us = quantile(p, 0.99);
    row.replay_p50_us = quantile(r, 0.5);
    row.replay_p99_us = quantile(r, 0.99);
    v.production.push_back(row);
  }
}

}  // namespace collide::orchestrator::report
