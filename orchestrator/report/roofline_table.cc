#include "orchestrator/report/roofline_table.h"

#include <fmt/format.h>

namespace collide::orchestrator::report {

std::string roofline_table(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    if (!v.roofline.known()) continue;
    if (out.empty()) {
      out = "\nJCT against the roofline: the least time the job's bytes need at line rate on the fabric's "
            "busiest port (1 is a fabric that never made the job wait)\n";
      out += fmt::format("  {:<26} {:>12} {:>13} {:>13}  {}\n", "variant", "JCT (s)", "roofline (s)",
                         "JCT/roofline", "bottleneck");
    }
    const std::string ratio = v.jct_roofline_ratio > 0 ? fmt::format("{:.2f}", v.jct_roofline_ratio) : "-";
    out += fmt::format("  {:<26} {:>12.4f} {:>13.4f} {:>13}  {} ({:.1f} MB at {:g} Gb/s)\n", v.name, v.jct.mean,
                       v.roofline.seconds, ratio, v.roofline.bottleneck,
                       static_cast<double>(v.roofline.bottleneck_bytes) / 1e6, v.roofline.bottleneck_gbps);
  }
  return out;
}

}  // namespace collide::orchestrator::report
