#include "orchestrator/report/ecmp_table.h"

#include <fmt/format.h>

namespace collide::orchestrator::report {
namespace {

std::string cell(const LinkBalance& b) {
  if (b.links == 0) return fmt::format("{:>8} {:>6} {:>5}", "-", "-", "-");
  return fmt::format("{:>8.3f} {:>6.3f} {:>5}", b.max_mean, b.jain, b.links);
}

}  // namespace

std::string ecmp_table(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    if (v.ecmp.empty()) continue;
    if (out.empty()) {
      out = "\nECMP balance: busiest link / mean (max/mean, 1 is even) and Jain's index over the "
            "equal-cost links that carried traffic (mean over repetitions)\n";
      out += fmt::format("  {:<26} {:>12} {:>8} {:>6} {:>5} {:>8} {:>6} {:>5}\n", "variant", "JCT (s)",
                         "up m/m", "jain", "links", "down m/m", "jain", "links");
    }
    out += fmt::format("  {:<26} {:>12.4f} {} {}\n", v.name, v.jct.mean, cell(v.ecmp.leaf_uplinks),
                       cell(v.ecmp.spine_downlinks));
  }
  if (!out.empty()) out += "  (up: leaf -> spine links; down: spine -> leaf links)\n";
  // A 3-tier fabric's upper tier: the same figures for the links between spines and super-spines.
  std::string upper;
  for (const VariantSummary& v : report.variants) {
    if (v.ecmp.spine_uplinks.links == 0 && v.ecmp.super_downlinks.links == 0) continue;
    if (upper.empty()) {
      upper = fmt::format("  {:<26} {:>12} {:>8} {:>6} {:>5} {:>8} {:>6} {:>5}\n", "variant", "JCT (s)", "up m/m",
                          "jain", "links", "down m/m", "jain", "links");
    }
    upper += fmt::format("  {:<26} {:>12.4f} {} {}\n", v.name, v.jct.mean, cell(v.ecmp.spine_uplinks),
                         cell(v.ecmp.super_downlinks));
  }
  if (!upper.empty()) out += upper + "  (up: spine -> super-spine links; down: super-spine -> spine links)\n";
  return out;
}

}  // namespace collide::orchestrator::report
