#pragma once

#include <string>
#include <vector>

#include "orchestrator/report/report.h"

// How often data packets arrived out of order, per variant: packets beyond a hole in their QP's
// PSNs over all data packets the NICs received. Per-packet spraying in the fabric raises it without
// any loss; a loss raises it too (everything behind the hole), so it reads beside the resends.
namespace collide::orchestrator::report {

struct OutOfOrderRow {
  std::string variant;
  std::string rate;  // "1.23%"
  uint64_t out_of_order_packets = 0;
  uint64_t packets_received = 0;
};

// One row per variant whose NICs counted received packets; empty when none did (older agents).
std::vector<OutOfOrderRow> out_of_order_rows(const Report& report);
// The rows as the text summary prints them; empty without rows.
std::string out_of_order_text(const Report& report);

}  // namespace collide::orchestrator::report
