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
// Virtual devices' EAL memory: the EAL starts once per process and every NIC's port takes its
// buffer pool from it, about 75 MB of mbufs plus the AF_XDP PMD's own umem per NIC, so a host of
// 4 to 8 NICs needs about 1 GB.
inline constexpr uint32_t kDefaultEalHeapMb = 1024;

// What a replay's ports get (backend::open_ports) where their config leaves these at 0: rings and
// pools sized for bursts at line rate rather than a port's modest defaults.
inline constexpr uint32_t kReplayRingSize = 4096;
inline constexpr uint32_t kReplayMbufCountPerQueue = 32767;

// The most queue pairs a port is given: more than any core count a host drives one NIC with.
inline constexpr uint32_t kMaxQueues = 64;

}  // namespace collide::replayer::dpdk
