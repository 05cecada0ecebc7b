#pragma once

#include <cstdint>

namespace collide::replayer::engine {

// The UDP source port of a QP's frames. RoCEv2 varies it per QP so that ECMP (a hash over the
// five-tuple) spreads QPs over paths; it is the only entropy a RoCE flow gives a switch. `seed`
// (the scenario's Runs.seed) moves every QP's port, so that which QPs share a path changes from
// seed to seed as it does from job to job on a real fabric; seed 0 gives the unseeded ports.
uint16_t entropy_port(uint32_t local, uint32_t peer, uint32_t qpn, uint64_t seed);

// Lanes a NIC's queues can be steered to by the source port (steered_port): the low bits of the
// port a flow rule matches under a mask.
constexpr uint32_t kSteeringBits = 4;
constexpr uint32_t kMaxSteeredLanes = 1u << kSteeringBits;

// A QP's source port that also names its lane: the entropy port with its low kSteeringBits set to
// those of the channel's turn on its NIC (collectives::channel_turn). A receiving NIC of L queues
// (L a power of two up to kMaxSteeredLanes) sends each QP to queue (port & (L - 1)), the lane of
// its channel (turn % L), by L flow rules; both ends of a QP agree on the turn, so its data and
// its ACKs each reach their lane, whatever the lane count at either end.
constexpr uint16_t steered_port(uint16_t entropy, uint32_t turn) {
  return static_cast<uint16_t>((entropy & ~(kMaxSteeredLanes - 1)) | (turn & (kMaxSteeredLanes - 1)));
}

// The seed of one run's paths: the scenario's Runs.seed and the repetition, since each repetition
// is another launch of the job with other source ports (and, on a balanced virtual fabric, other
// draws: orchestrator/testbed/fabric_balancing.h). Runs.seed 0, repetition 0: 0, the unseeded ports.
constexpr uint64_t entropy_seed(uint64_t runs_seed, uint32_t repetition) {
  if (runs_seed == 0 && repetition == 0) return 0;
  return runs_seed * 0x100000001b3ull + repetition + 1;
}

}  // namespace collide::replayer::engine
