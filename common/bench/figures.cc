#include "common/bench/figures.h"

#include <cstdio>
#include <vector>

namespace collide::bench {
namespace {

// Keeps each benchmark's counters while the console reporter prints as usual.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      for (const auto& [name, counter] : run.counters) {
        values_[run.benchmark_name()][name] = counter.value;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  const std::map<std::string, std::map<std::string, double>>& values() const { return values_; }

 private:
  std::map<std::string, std::map<std::string, double>> values_;
};

}  // namespace

int run_and_print_ratios(int argc, char** argv, const std::vector<Ratio>& ratios) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  int missing = 0;
  for (const Ratio& r : ratios) {
    const auto& v = reporter.values();
    auto num = v.find(r.numerator);
    auto den = v.find(r.denominator);
    if (num == v.end() || den == v.end() || !num->second.count(r.counter) ||
        !den->second.count(r.counter) || den->second.at(r.counter) == 0) {
      std::fprintf(stderr, "figure %s: %s or %s did not run\n", r.figure.c_str(),
                   r.numerator.c_str(), r.denominator.c_str());
      ++missing;
      continue;
    }
    std::printf("figure %s %.3f x\n", r.figure.c_str(),
                num->second.at(r.counter) / den->second.at(r.counter));
  }
  std::fflush(stdout);
  return missing == 0 ? 0 : 1;
}

}  // namespace collide::bench
