#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

// A streaming histogram of positive values (times) whose size does not grow with the number of
// values added: buckets of logarithmically growing width, each 2% wider than the one below, so
// that a quantile read from it is within 1% of the value an exact computation would give,
// whatever the scale (microseconds or hours). The count, sum, minimum and maximum are exact.
// A soak adds one value per run or per collective for hours: a list of every value would grow
// without bound. (No C++ HDR histogram is packaged for Debian 12; this is the small part of one
// collide needs.)
namespace collide::orchestrator::report {

class LogHistogram {
 public:
  // Values at or below 0 are counted in the lowest bucket (a time cannot be negative; 0 can be).
  void add(double value);
  void merge(const LogHistogram& other);

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ == 0 ? 0 : min_; }
  double max() const { return count_ == 0 ? 0 : max_; }
  double mean() const { return count_ == 0 ? 0 : sum_ / static_cast<double>(count_); }
  // The q-quantile (0..1): the value of rank ceil(q * count), within 1%; exact at 0 and 1
  // (the minimum and the maximum); 0 when empty.
  double quantile(double q) const;
  // Buckets in use: what the histogram costs in memory.
  size_t buckets() const { return buckets_.size(); }

 private:
  std::map<int32_t, uint64_t> buckets_;  // bucket index -> values in it
  uint64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0, max_ = 0;
};

}  // namespace collide::orchestrator::report
