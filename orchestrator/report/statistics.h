#pragma once

#include <cstddef>
#include <vector>

namespace collide::orchestrator::report {

// The q-quantile (0..1) of `values` by linear interpolation between order statistics.
double quantile(std::vector<double> values, double q);

struct MeanInterval {
  double mean = 0;
  double low = 0;   // 95% confidence interval of the mean (Student's t); equal to mean for n < 2
  double high = 0;
  size_t n = 0;
};

MeanInterval mean_with_interval(const std::vector<double>& values);

}  // namespace collide::orchestrator::report
