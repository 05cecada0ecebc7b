#pragma once

#include <cstdint>

#include "collide/trace.pb.h"

// Closed forms of the traffic one collective puts on the network. Two models, side by side:
//  - the full-mesh model of the articles collide answers (every rank sends its whole buffer to
//    every other rank of the communicator), which is what "traffic per mini-batch" formulas such
//    as data parallel 2PG(G-1) count;
//  - what NCCL's algorithms (ring, tree, pairwise, chains) really send, e.g. a ring all-reduce
//    sends 2(n-1)/n of the buffer from each rank.
// Both count bytes sent, each byte once, for one op of an n-rank communicator whose per-rank size
// `bytes` has the trace model's meaning (Op.bytes).
namespace collide::traces::analysis {

// NCCL's algorithms: ring or tree all-reduce 2(n-1)·S, all-gather (n-1)·n·c, ... These are also
// the yardstick the replayer's expansion is checked against.
uint64_t total_sent_bytes(v1::OpKind kind, uint32_t n, uint64_t bytes);

// The full-mesh model: all-reduce n(n-1)·S; all-gather each rank's send chunk to the n-1 others;
// reduce-scatter each rank's chunk-sized share to the n-1 others; all-to-all n(n-1)·c; rooted
// collectives (n-1)·S; a send S.
uint64_t full_mesh_sent_bytes(v1::OpKind kind, uint32_t n, uint64_t bytes);

// An all-to-allv's bytes leave each rank as its own peer_bytes say, so both models agree: the
// bytes this issuing rank sends to the others (its own entry, at `self`, stays local).
uint64_t alltoallv_sent_bytes(const v1::Op& op, uint32_t self);

// nccl-tests' size S of an op (the buffer the bandwidth is quoted for): all-gather,
// reduce-scatter, all-to-all, gather, scatter use n x the per-rank chunk.
uint64_t nccl_tests_size(v1::OpKind kind, uint32_t n, uint64_t bytes);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor.
double busbw_factor(v1::OpKind kind, uint32_t n);

}  // namespace collide::traces::analysis
