#pragma once

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "traces/trace_io.h"

// The smallest real job for tests that need a trace file: every rank of `world` does one
// all-reduce of `bytes` on communicator "world" (declared in the header when `declare_comm`).
namespace collide::testing {

inline void write_all_reduce_trace(const std::string& path, uint32_t world, uint64_t bytes,
                                   bool declare_comm = false) {
  v1::TraceHeader header;
  header.set_world_size(world);
  if (declare_comm) {
    auto* comm = header.add_communicators();
    comm->set_id("world");
    for (uint32_t r = 0; r < world; ++r) comm->add_ranks(r);
  }
  auto writer = traces::TraceWriter::create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status().to_string();
  for (uint32_t r = 0; r < world; ++r) {
    v1::Op op;
    op.set_rank(r);
    op.set_kind(v1::OP_KIND_ALL_REDUCE);
    op.set_comm("world");
    op.set_bytes(bytes);
    ASSERT_TRUE((*writer)->write(op).ok());
  }
  ASSERT_TRUE((*writer)->close().ok());
}

}  // namespace collide::testing
