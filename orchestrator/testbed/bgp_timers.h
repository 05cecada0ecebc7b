#pragma once

#include <cstdint>

// The timers of a fabric routed by BGP (bgp_fabric.h), with their defaults: FRR's own (its
// "datacenter" profile for BGP, bfdd's for BFD).
namespace collide::orchestrator::testbed {

inline constexpr uint32_t kDefaultBfdIntervalMs = 300;
inline constexpr uint32_t kDefaultBfdMultiplier = 3;
inline constexpr uint32_t kDefaultBgpKeepaliveS = 3;
inline constexpr uint32_t kDefaultBgpHoldS = 9;

struct BgpTimers {
  uint32_t bfd_interval_ms = kDefaultBfdIntervalMs;  // BFD transmit and receive interval
  uint32_t bfd_multiplier = kDefaultBfdMultiplier;   // intervals without a packet before BFD is down
  uint32_t keepalive_s = kDefaultBgpKeepaliveS;
  uint32_t hold_s = kDefaultBgpHoldS;
  // How long BFD takes to call a silent link down.
  uint64_t bfd_detection_ns() const { return uint64_t{bfd_interval_ms} * bfd_multiplier * 1'000'000; }
};

}  // namespace collide::orchestrator::testbed
