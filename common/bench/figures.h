#pragma once

#include <map>
#include <string>

#include <benchmark/benchmark.h>

// Runs Google Benchmark and turns its results into the `figure <name> <value> <unit>` lines that
// ci/bench.sh collects. Figures are ratios of two benchmarks measured in the same run, so they
// compare like with like on a noisy machine.
namespace collide::bench {

struct Ratio {
  std::string figure;       // e.g. "frame_build_vs_memcpy"
  std::string numerator;    // benchmark name as Google Benchmark prints it
  std::string denominator;  // the peer measured in the same run
  std::string counter = "items_per_second";
};

// Parses benchmark flags from argv, runs every registered benchmark, prints the console report
// and then one figure line per ratio. Returns the process exit code.
int run_and_print_ratios(int argc, char** argv, const std::vector<Ratio>& ratios);

}  // namespace collide::bench
