#pragma once

#include <cstdint>

#include "collide/trace.pb.h"

// Closed-form traffic of each collective, the yardstick the expansion is checked against and the
// figures `collide plan` and reports print.
namespace collide::replayer::collectives {

// Bytes all ranks of an n-rank communicator send in total for one op whose per-rank `bytes`
// follows the trace model's meaning (Op.bytes), for the algorithms collide expands: e.g. ring or
// tree all-reduce 2(n-1)·S, all-gather (n-1)·n·c.
uint64_t total_sent_bytes(v1::OpKind kind, uint32_t n, uint64_t bytes);

// nccl-tests' size S of an op (the buffer the bandwidth is quoted for): all-gather,
// reduce-scatter, all-to-all, gather, scatter use n x the per-rank chunk.
uint64_t nccl_tests_size(v1::OpKind kind, uint32_t n, uint64_t bytes);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor.
double busbw_factor(v1::OpKind kind, uint32_t n);

}  // namespace collide::replayer::collectives
