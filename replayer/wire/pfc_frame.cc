#include "replayer/wire/pfc_frame.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace collide::replayer::wire {
namespace {

constexpr size_t kEthHeader = 14;
constexpr size_t kOpcodeAt = kEthHeader;
constexpr size_t kEnableVectorAt = kEthHeader + 2;
constexpr size_t kTimesAt = kEthHeader + 4;  // PFC: eight times; PAUSE: one, at the vector's place
constexpr size_t kPfcEnd = kTimesAt + 2 * kPriorities;

uint16_t read16(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint16_t>(b[at] << 8 | b[at + 1]);
}

void write16(std::span<uint8_t> b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}

}  // namespace

bool is_mac_control(std::span<const uint8_t> frame) {
  return frame.size() >= kEthHeader && read16(frame, 12) == kEtherTypeMacControl;
}

Result<size_t> encode_pfc(const PauseFrame& pause, std::span<uint8_t> out) {
  if (out.size() < kMacControlFrameSize) {
    return invalid_argument(fmt::format("a PFC frame needs {} bytes, the buffer has {}",
                                        kMacControlFrameSize, out.size()));
  }
  std::fill(out.begin(), out.begin() + kMacControlFrameSize, uint8_t{0});
  std::copy(kMacControlDestination.bytes.begin(), kMacControlDestination.bytes.end(), out.begin());
  std::copy(pause.source.bytes.begin(), pause.source.bytes.end(), out.begin() + 6);
  write16(out, 12, kEtherTypeMacControl);
  write16(out, kOpcodeAt, kOpcodePfc);
  write16(out, kEnableVectorAt, pause.enabled);  // the upper 8 bits are reserved, 0
  for (size_t p = 0; p < kPriorities; ++p) write16(out, kTimesAt + 2 * p, pause.quanta[p]);
  return kMacControlFrameSize;
}

Result<PauseFrame> decode_pause(std::span<const uint8_t> frame) {
  if (!is_mac_control(frame)) return invalid_argument("not a MAC control frame");
  if (frame.size() < kPfcEnd) {
    return invalid_argument(fmt::format("a MAC control frame of {} bytes is too short", frame.size()));
  }
  PauseFrame pause;
  std::copy(frame.begin() + 6, frame.begin() + 12, pause.source.bytes.begin());
  const uint16_t opcode = read16(frame, kOpcodeAt);
  if (opcode == kOpcodePause) {
    // 802.3x: one time for the whole link, in the place PFC's enable vector takes.
    pause.link_pause = true;
    pause.enabled = 0xff;
    pause.quanta.fill(read16(frame, kEnableVectorAt));
    return pause;
  }
  if (opcode != kOpcodePfc) {
    return invalid_argument(fmt::format("MAC control opcode {:#06x} is not PAUSE or PFC", opcode));
  }
  const uint16_t vector = read16(frame, kEnableVectorAt);
  if (vector > 0xff) {
    return invalid_argument(fmt::format("PFC class-enable vector {:#06x} sets reserved bits", vector));
  }
  pause.enabled = static_cast<uint8_t>(vector);
  for (size_t p = 0; p < kPriorities; ++p) pause.quanta[p] = read16(frame, kTimesAt + 2 * p);
  return pause;
}

uint64_t pause_quanta_ns(uint16_t quanta, double gbps) {
  if (!(gbps > 0)) return 0;
  // bits / (Gbit/s) = ns
  return static_cast<uint64_t>(std::llround(static_cast<double>(quanta) * kBitTimesPerQuantum / gbps));
}

}  // namespace collide::replayer::wire
