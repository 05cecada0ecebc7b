#pragma once

#include <chrono>
#include <cstdint>

// What a DPDK port and the EAL get where DpdkPortConfig leaves a field at 0 (port.proto documents
// each). The one place these numbers are decided.
namespace collide::replayer::dpdk {

inline constexpr uint32_t kDefaultRingSize = 1024;         // descriptors per queue
inline constexpr uint32_t kDefaultMbufCountPerQueue = 8191;
inline constexpr uint32_t kDefaultMbufCache = 256;
inline constexpr uint32_t kDefaultQueues = 1;
inline constexpr std::chrono::milliseconds kDefaultLinkUpTimeout{10'000};
inline constexpr uint32_t kDefaultEalHeapMb = 512;

// What a replay's ports get (backend::open_ports) where their config leaves these at 0: rings and
// pools sized for bursts at line rate rather than a port's modest defaults.
inline constexpr uint32_t kReplayRingSize = 4096;
inline constexpr uint32_t kReplayMbufCountPerQueue = 32767;

// The most queue pairs a port is given: more than any core count a host drives one NIC with.
inline constexpr uint32_t kMaxQueues = 64;

}  // namespace collide::replayer::dpdk
