#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"

// Small traces for the analysis tests, built in memory and written to temporary files.
namespace collide::traces::analysis::testing {

struct CommSpec {
  std::string id;
  std::vector<uint32_t> ranks;
};

v1::TraceHeader make_header(uint32_t world_size, const std::vector<CommSpec>& comms);

// An op with count derived from bytes and the datatype (bfloat16 unless given), root -1 for
// unrooted collectives, and source line <line> of "gen.log" where line is unique per (rank, index).
v1::Op make_op(uint32_t rank, uint64_t index, v1::OpKind kind, const std::string& comm,
               uint64_t bytes, int32_t root = -1, v1::DataType datatype = v1::DATA_TYPE_BFLOAT16);

// A path in the temporary directory unique to this process and `tag`; removed by the caller.
std::string temp_trace_path(const std::string& tag);

Status write_trace(const std::string& path, const v1::TraceHeader& header,
                   const std::vector<v1::Op>& ops);

// Renumbers each rank's ops 0, 1, 2, ... in their order in `ops` (after a test removes one).
void renumber(std::vector<v1::Op>& ops);

}  // namespace collide::traces::analysis::testing
