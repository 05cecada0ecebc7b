#pragma once

#include <cstddef>
#include <vector>

namespace collide::orchestrator::report {

// The q-quantile (0..1) of `values` by linear interpolation between order statistics.
double quantile(std::vector<double> values, double q);

// Student's t quantile with `dof` degrees of freedom (which need not be whole): the t with
// P(T <= t) = p. 0 for dof <= 0.
double student_t_quantile(double p, double dof);

struct MeanInterval {
  double mean = 0;     // arithmetic mean
  double geomean = 0;  // geometric mean (positive_mean_with_interval only)
  double low = 0;      // the 95% confidence interval; equal to mean for n < 2
  double high = 0;
  size_t n = 0;
};

// The arithmetic mean with the 95% interval of Student's t over `values`.
MeanInterval mean_with_interval(const std::vector<double>& values);

// For positive, right-skewed quantities such as JCTs and slowdowns: the arithmetic and geometric
// means, and the 95% interval of the geometric mean from Student's t over log(values), mapped
// back. The symmetric interval of the plain mean goes below zero for few, spread repetitions (two
// JCTs of 1 s and 2 s give -4.8 .. 7.8 s); the log-scale one cannot and, like the data, is longer
// above than below. Values <= 0 leave the geometric interval undefined: mean and interval are then
// those of mean_with_interval, clamped at 0.
MeanInterval positive_mean_with_interval(const std::vector<double>& values);

}  // namespace collide::orchestrator::report
