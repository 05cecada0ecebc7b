#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/result.h"
#include "replayer/wire/addresses.h"

// Ethernet flow control frames (MAC control, EtherType 0x8808): IEEE 802.1Qbb priority flow
// control (PFC, opcode 0x0101: a class-enable vector and one pause time per priority) and
// 802.3x PAUSE (opcode 0x0001: one pause time for the whole link). Times are in quanta of 512 bit
// times at the link's speed; 0 resumes at once (XON). Frames go to the reserved multicast address
// 01:80:c2:00:00:01, which bridges do not forward, and are 60 bytes before the FCS.
namespace collide::replayer::wire {

inline constexpr uint16_t kEtherTypeMacControl = 0x8808;
inline constexpr uint16_t kOpcodePause = 0x0001;
inline constexpr uint16_t kOpcodePfc = 0x0101;
inline constexpr size_t kPriorities = 8;
inline constexpr size_t kMacControlFrameSize = 60;
inline constexpr MacAddress kMacControlDestination{{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01}};
inline constexpr uint32_t kBitTimesPerQuantum = 512;

struct PauseFrame {
  MacAddress source;
  // Bit i set: priority i is paused for quanta[i] (or resumed, with 0). 802.3x PAUSE decodes as
  // every priority with one time.
  uint8_t enabled = 0;
  std::array<uint16_t, kPriorities> quanta{};
  bool link_pause = false;  // decoded from an 802.3x PAUSE, not PFC

  bool pauses(uint8_t priority) const { return priority < kPriorities && (enabled >> priority) & 1; }
};

// True when the frame is MAC control (its EtherType, without a VLAN tag), whatever the opcode.
bool is_mac_control(std::span<const uint8_t> frame);

// Writes a PFC frame (60 bytes, zero padded) into `out`; returns its length.
Result<size_t> encode_pfc(const PauseFrame& pause, std::span<uint8_t> out);

// Reads a PFC or 802.3x PAUSE frame; any other frame, or one too short, is an error.
Result<PauseFrame> decode_pause(std::span<const uint8_t> frame);

// How long `quanta` pause a link of `gbps`, in nanoseconds (a quantum is 512 bit times).
uint64_t pause_quanta_ns(uint16_t quanta, double gbps);

}  // namespace collide::replayer::wire
