#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "orchestrator/report/collective_times.h"
#include "orchestrator/report/log_histogram.h"

// A variant's collective completion times over its runs, and what the report reads from them:
// the overall p50/p99/p99.9/max, the nccl-tests table per kind and size, production beside
// replay. Exact (every time kept) up to a cap; past it, everything so far and everything after
// goes into streaming histograms (within 1%, log_histogram.h), so that a soak of hours holds the
// same memory as one of minutes.
namespace collide::orchestrator::report {

struct VariantSummary;

class CollectiveTally {
 public:
  // `cap`: completion times kept exactly, over all runs; SIZE_MAX: all.
  explicit CollectiveTally(size_t cap = SIZE_MAX) : cap_(cap) {}

  // A completed collective (one that failed is not a completion time).
  void add(const CollectiveTime& c);
  bool streaming() const { return streaming_; }
  // Sets the summary's collective_us, collective_count, p50/p99/p999/max, sizes and production.
  void summarize(VariantSummary& v) const;

 private:
  // kind, bytes, communicator size, datatype, reduce op: a row of the size table.
  using SizeKey = std::tuple<int, uint64_t, uint32_t, int, int>;
  struct Streams {
    LogHistogram all_us;
    std::map<SizeKey, LogHistogram> sizes_us;
    std::map<int, std::pair<LogHistogram, LogHistogram>> production_us;  // by kind: production, replay
  };
  void stream(const CollectiveTime& c);

  size_t cap_;
  bool streaming_ = false;
  std::vector<CollectiveTime> exact_;
  Streams streams_;
};

}  // namespace collide::orchestrator::report
