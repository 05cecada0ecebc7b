#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collide/scenario.pb.h"
#include "collide/trace.pb.h"
#include "common/result.h"

// The incast workload (workload.incast): N senders to one receiver, as point-to-point sends and
// receives of the trace model on the world communicator.
namespace collide::orchestrator {

constexpr uint32_t kMinIncastSenders = 2;
constexpr uint32_t kMaxIncastSenders = 32;

// What is wrong with an incast for a job of `world` ranks: the field (under workload.incast) and
// why; nothing when it fits.
struct IncastProblem {
  std::string field;
  std::string what;
};
std::optional<IncastProblem> incast_problem(const v1::Incast& incast, uint32_t world);
// The same as a status, "field: why".
Status check_incast(const v1::Incast& incast, uint32_t world);

// The sending ranks, in the order they are chosen: ranks on other hosts than the receiver's
// first (nearest rank numbers after the receiver's first), then its host-mates.
std::vector<uint32_t> incast_senders(const v1::Incast& incast, uint32_t world, uint32_t ranks_per_host);

// Every rank's ops for `iterations` iterations, each op `bytes` (already scaled), rank by rank
// and in each rank's order: per incast a send to the receiver on each sender, and on the
// receiver one receive from each sender, grouped so they run at once. Ranks that take no part
// have no ops.
std::vector<v1::Op> incast_ops(const v1::Incast& incast, uint32_t world, uint32_t ranks_per_host,
                               uint64_t bytes, uint32_t iterations);

}  // namespace collide::orchestrator
