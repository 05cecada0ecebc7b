#pragma once

#include <cstdint>
#include <vector>

#include "collide/trace.pb.h"

// Communicators of a log without init lines (NCCL_DEBUG_SUBSYS=COLL, the usual setting for
// hunting hangs), recognised from the collective lines alone (FACTS.md section 8).
//
// A comm pointer is an address in one process, so one communicator shows as one pointer per
// process. Pointers of different processes are taken as one communicator when they print the same
// `[nranks=N]` and agree on every collective they both show: the same kind, count and datatype at
// the same opCount and place within it (NCCL counts a communicator's collectives from 0 on every
// rank alike).
// Point-to-point ops differ between peers by nature and are not compared. Among pointers that
// agree equally well (e.g. eight tensor-parallel groups running the same layers), processes are
// taken in the caller's order (host, then device), which puts neighbours together: contiguous
// groups come out right, strided ones may not.
//
// Ranks: the members of the largest communicator (the world) are numbered in that order from 0;
// processes outside it follow. The log cannot tell the real ranks: the caller says in the trace
// that they were inferred.
namespace collide::traces::nccl {

struct CollKey {
  uint64_t op_count = 0;
  // Its place among the consecutive collectives of one opCount: the ops of one group call share
  // it, and from 2.27 communicators within one node print opCount 0 for every op.
  uint32_t occurrence = 0;
  uint64_t count = 0;
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  v1::DataType datatype = v1::DATA_TYPE_UNSPECIFIED;
};

// One process's comm pointer, as its collective lines show it.
struct CommSighting {
  uint32_t process = 0;  // position of the process in the caller's order (host, then device)
  int32_t nranks = -1;   // `[nranks=N]`, -1 when never printed
  std::vector<CollKey> colls;  // its collectives but point-to-point ones, in issue order
};

struct InferredComm {
  uint32_t nranks = 0;             // as printed; the members found when never printed
  std::vector<uint32_t> sightings;  // in comm-rank order
};

struct InferredLayout {
  std::vector<InferredComm> comms;  // in order of their first sighting
  std::vector<uint32_t> rank;       // by process position: its global rank
  uint32_t world = 0;               // index of the largest communicator in comms
  uint32_t world_size = 0;          // its nranks, or the processes seen if more
  // Communicators of the world's size whose processes are all different from the first one's:
  // logs of another job, or of another run (indices into comms).
  std::vector<uint32_t> other_worlds;
  // Processes with two pointers of one nranks showing the same collectives at the same opCounts:
  // most likely one process driving several devices of one communicator (single-process
  // multi-GPU), which the lines cannot tell apart; such a process is one rank here.
  std::vector<uint32_t> several_devices;
};

// `processes` is how many process positions there are; every sighting's process is below it.
InferredLayout infer_comms(const std::vector<CommSighting>& sightings, uint32_t processes);

}  // namespace collide::traces::nccl
