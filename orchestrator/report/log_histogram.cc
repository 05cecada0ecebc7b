#include "orchestrator/report/log_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace collide::orchestrator::report {
namespace {

// Bucket i holds (kGrowth^(i-1), kGrowth^i]; its midpoint in relative terms is within 1% of
// anything in it.
constexpr double kGrowth = 1.02;
const double kLogGrowth = std::log(kGrowth);
// Below this (1e-12 of a second, or a value of 0) everything shares the lowest bucket.
constexpr double kSmallest = 1e-12;

int32_t bucket_of(double value) {
  const double v = std::max(value, kSmallest);
  return static_cast<int32_t>(std::ceil(std::log(v) / kLogGrowth));
}

// The value that stands for a bucket: the point whose relative distance to both ends is equal.
double value_of(int32_t bucket) {
  const double upper = std::exp(static_cast<double>(bucket) * kLogGrowth);
  return upper * 2 / (1 + kGrowth);
}

}  // namespace

void LogHistogram::add(double value) {
  if (std::isnan(value)) return;
  ++buckets_[bucket_of(value)];
  min_ = count_ == 0 ? value : std::min(min_, value);
  max_ = count_ == 0 ? value : std::max(max_, value);
  ++count_;
  sum_ += value;
}

void LogHistogram::merge(const LogHistogram& other) {
  if (other.count_ == 0) return;
  for (const auto& [bucket, n] : other.buckets_) buckets_[bucket] += n;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
}

double LogHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  if (q <= 0) return min_;
  if (q >= 1) return max_;
  const auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  uint64_t seen = 0;
  for (const auto& [bucket, n] : buckets_) {
    seen += n;
    if (seen >= rank) return std::clamp(value_of(bucket), min_, max_);
  }
  return max_;
}

}  // namespace collide::orchestrator::report
