#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"

// Writes a collide trace back out as one merged NCCL_DEBUG=INFO log stream (init, GRAPH, NET and
// COLL lines), so an imported trace can be imported again and compared, and so tests can make
// logs of any shape. Comm pointers are made up, one per (rank, communicator).
namespace collide::traces::nccl {

struct NcclLogWriterOptions {
  std::string version = "2.18.3+cuda12.2";
  // Print `commId` on init lines (2.16+); without it the importer must group comms by itself.
  bool comm_ids = true;
  // Send lines with `sendbuff (nil) recvbuff <p>` (2.12.7+) rather than the older convention.
  bool new_send_buffers = true;
};

Status write_nccl_log(const v1::TraceHeader& header, const std::vector<v1::Op>& ops,
                      std::ostream& out, const NcclLogWriterOptions& options = {});

// "YYYY-MM-DD HH:MM:SS.nnnnnnnnn" (UTC) for ns since the Unix epoch.
std::string format_timestamp(uint64_t ns);

}  // namespace collide::traces::nccl
