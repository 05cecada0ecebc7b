#pragma once

#include <cstdint>
#include <string>

#include "collide/trace.pb.h"

namespace collide::replayer::engine {

// When one op of one rank ran: the engine's per-operation completion record.
struct OpRecord {
  uint32_t rank = 0;
  uint64_t op_index = 0;
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  std::string comm;
  uint64_t bytes = 0;          // the op's size (Op.bytes)
  uint64_t network_bytes = 0;  // what this rank sent over the network for it
  uint64_t start_ns = 0;       // monotonic clock of the host
  uint64_t end_ns = 0;
  bool failed = false;
  std::string failure;
};

}  // namespace collide::replayer::engine
