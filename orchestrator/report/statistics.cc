#include "orchestrator/report/statistics.h"

#include <algorithm>
#include <cmath>

namespace collide::orchestrator::report {
namespace {

// Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom; 1.96 beyond.
double t95(size_t dof) {
  static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof == 0) return 0;
  return dof <= 30 ? kTable[dof - 1] : 1.96;
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = static_cast<size_t>(std::ceil(pos));
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
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
  const double half = t95(m.n - 1) * std::sqrt(var / static_cast<double>(m.n));
  m.low = m.mean - half;
  m.high = m.mean + half;
  return m;
}

}  // namespace collide::orchestrator::report
