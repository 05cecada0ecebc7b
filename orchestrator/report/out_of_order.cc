#include "orchestrator/report/out_of_order.h"

#include <fmt/format.h>

namespace collide::orchestrator::report {

std::vector<OutOfOrderRow> out_of_order_rows(const Report& report) {
  std::vector<OutOfOrderRow> rows;
  for (const VariantSummary& v : report.variants) {
    if (v.packets_received == 0) continue;
    rows.push_back({v.name, fmt::format("{:.2f}%", 100 * v.out_of_order_rate()), v.out_of_order_packets,
                    v.packets_received});
  }
  return rows;
}

std::string out_of_order_text(const Report& report) {
  const std::vector<OutOfOrderRow> rows = out_of_order_rows(report);
  if (rows.empty()) return "";
  std::string out = "\nOut-of-order rate: data packets that arrived beyond a hole in their QP's PSNs\n";
  for (const OutOfOrderRow& r : rows) {
    out += fmt::format("  {:<26} {:>8} ({} of {} packets)\n", r.variant, r.rate, r.out_of_order_packets,
                       r.packets_received);
  }
  return out;
}

}  // namespace collide::orchestrator::report
