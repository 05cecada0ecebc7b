#pragma once

#include <cstdint>

#include "collide/trace.pb.h"
#include "common/result.h"

// What a Chakra collective's `comm_size` attribute means, kind by kind, and how it maps onto
// Op.bytes (NCCL's per-rank buffer: see Op.count in trace.proto). Both directions live here so
// that import and export cannot drift apart.
//
// The two readers that fix the meaning:
//  - Chakra's PyTorch converter (src/converter/pytorch_converter.py, pytorch_node.py) writes
//    comm_size as the sum of the bytes of the collective's input tensors on the issuing rank;
//  - ASTRA-sim's system layer (workload/Workload.cc passes comm_size to Sys::generate_*; the ring
//    in astraccl/native_collectives/collective_algorithm/Ring.cc splits it) reads it as:
//      ALL_REDUCE      the whole buffer; each of the n ranks ends with all of it;
//      ALL_GATHER      one rank's contribution (final size n x comm_size);
//      REDUCE_SCATTER  the whole input buffer (each rank ends with comm_size / n);
//      ALL_TO_ALL      the whole send buffer (comm_size / n goes to each peer).
// So in collide's terms (Op.bytes):
//      ALL_REDUCE, ALL_GATHER, BROADCAST, REDUCE:  Op.bytes = comm_size
//      REDUCE_SCATTER, ALL_TO_ALL:                 Op.bytes = comm_size / n   (n: group size)
// BROADCAST and REDUCE move one buffer, which is what PyTorch's input sum gives. GATHER and
// SCATTER are not written by Chakra's converter and ASTRA-sim rejects them; collide reads their
// comm_size as the per-rank chunk (PyTorch's gather input on a non-root rank) and writes it back
// the same way. BARRIER has no size.
namespace collide::traces::chakra {

// Op.bytes for a collective of `kind` over `group_size` ranks whose node says `comm_size`.
// An error when a whole-buffer size does not split evenly over the group (the node is then not
// the per-group collective it claims to be, and guessing would change the traffic).
Result<uint64_t> op_bytes_from_comm_size(v1::OpKind kind, uint64_t comm_size, uint32_t group_size);

// The comm_size a Chakra node carries for `op` in a group of `group_size` ranks: the inverse of
// op_bytes_from_comm_size. An all-to-allv (exported as ALL_TO_ALL) writes its whole send buffer:
// the sum of peer_bytes where it has them.
uint64_t comm_size_from_op(const v1::Op& op, uint32_t group_size);

}  // namespace collide::traces::chakra
