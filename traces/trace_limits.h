#pragma once

#include <cstdint>
#include <string>

#include "collide/trace.pb.h"
#include "common/result.h"

// A trace's sizes and counts against collide's limits (common/input_limits.h). TraceReader
// applies them to every header and op it reads, so `plan`, `trace validate`, `replay` and `run`
// all refuse the same traces, with the op and the field named, before they act on them.
namespace collide::traces {

// world_size, and every rank a communicator or rank entry names; "<path>: header: <field>: ...".
Status check_header_limits(const v1::TraceHeader& header, const std::string& path);

// bytes, count and every all-to-allv share of op number `number` (from 1) of the file;
// "<path>: op #<number> (rank r, index i): <field>: ...".
Status check_op_limits(const v1::Op& op, uint64_t number, const std::string& path);

}  // namespace collide::traces
