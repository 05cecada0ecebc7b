#include "orchestrator/report/host_flow_control.h"

#include <fmt/format.h>

namespace collide::orchestrator::report {

std::vector<HostFlowControlRow> host_flow_control_rows(const Report& report) {
  std::vector<HostFlowControlRow> rows;
  for (const VariantSummary& v : report.variants) {
    HostFlowControlRow row{v.name};
    row.pause_frames = v.nic_pause_frames;
    row.pause_frames_sent = v.nic_pause_frames_sent;
    row.paused_ms = static_cast<double>(v.nic_paused_ns) / 1e6;
    row.buffer_dropped = v.nic_rx_buffer_dropped;
    if (row.pause_frames != 0 || row.pause_frames_sent != 0 || row.buffer_dropped != 0) rows.push_back(row);
  }
  return rows;
}

std::string host_flow_control_text(const Report& report) {
  const std::vector<HostFlowControlRow> rows = host_flow_control_rows(report);
  if (rows.empty()) return "";
  std::string out =
      "\nHost NIC flow control (PFC): pause frames received, the time they held "
      "sending, pause frames sent, frames dropped with the NIC's receive buffer full\n";
  for (const HostFlowControlRow& r : rows) {
    out += fmt::format("  {:<26} {:>8} received, held {:.3f} ms, {} sent, {} dropped\n", r.variant,
                       r.pause_frames, r.paused_ms, r.pause_frames_sent, r.buffer_dropped);
  }
  return out;
}

}  // namespace collide::orchestrator::report
