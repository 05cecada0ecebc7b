#pragma once

#include <string>
#include <vector>

#include "collide/trace.pb.h"

// Cutting a hung job's trace where it hung, so that a replay runs the job up to its hang and
// stops there instead of waiting on collectives some rank never joined. Per communicator that
// hangs (traces/analysis/hang_frontier.h): its collectives before the frontier are kept (every
// dumped member completed them); the frontier collective itself is kept only when every member
// started it (the hang is then inside the collective, on the network: that is what the replay
// must reproduce), and left out when a member only scheduled it, never issued it or left no
// dump (the hang is then outside NCCL). Later collectives of that communicator go. Send/recv
// ops are kept only when they completed: a send/recv pair whose one side hung cannot be told
// from the other's record. Communicators that do not hang keep every op.
namespace collide::traces::flight_recorder {

struct HangCut {
  bool hung = false;
  std::vector<std::string> where;  // per communicator cut, what was kept and why
  uint64_t ops_left_out = 0;
};

// Cuts `ops_by_rank` (each rank's ops in issue order, re-indexed from 0 after the cut).
HangCut stop_at_hang(const v1::TraceHeader& header, std::vector<std::vector<v1::Op>>& ops_by_rank);

}  // namespace collide::traces::flight_recorder
