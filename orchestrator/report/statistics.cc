#include "orchestrator/report/statistics.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/students_t.hpp>

namespace collide::orchestrator::report {
namespace {

constexpr double kLevel = 0.95;

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = static_cast<size_t>(std::ceil(pos));
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

double student_t_quantile(double p, double dof) {
  if (!(dof > 0) || !(p > 0 && p < 1)) return 0;
  return boost::math::quantile(boost::math::students_t_distribution<double>(dof), p);
}

MeanInterval mean_with_interval(const std::vector<double>& values) {
  MeanInterval m;
  m.n = values.size();
  if (values.empty()) return m;
  double sum = 0;
  for (double v : values) sum += v;
  m.mean = sum / static_cast<double>(m.n);
  m.low = m.high = m.mean;
  if (m.n < 2) return m;
  double var = 0;
  for (double v : values) var += (v - m.mean) * (v - m.mean);
  var /= static_cast<double>(m.n - 1);
  const double t = student_t_quantile(0.5 + kLevel / 2, static_cast<double>(m.n - 1));
  const double half = t * std::sqrt(var / static_cast<double>(m.n));
  m.low = m.mean - half;
  m.high = m.mean + half;
  return m;
}

MeanInterval positive_mean_with_interval(const std::vector<double>& values) {
  MeanInterval plain = mean_with_interval(values);
  if (values.empty()) return plain;
  if (std::any_of(values.begin(), values.end(), [](double v) { return !(v > 0); })) {
    plain.low = std::max(plain.low, 0.0);
    plain.high = std::max(plain.high, 0.0);
    plain.geomean = 0;
    return plain;
  }
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) logs.push_back(std::log(v));
  const MeanInterval log_interval = mean_with_interval(logs);
  MeanInterval m = plain;
  m.geomean = std::exp(log_interval.mean);
  m.low = std::exp(log_interval.low);
  m.high = std::exp(log_interval.high);
  return m;
}

}  // namespace collide::orchestrator::report
