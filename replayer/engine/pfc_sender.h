#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/result.h"
#include "replayer/engine/pause_hysteresis.h"
#include "replayer/transport/packet.h"
#include "replayer/wire/pfc_frame.h"

// Lossless receive (802.1Qbb) on the host's side: a NIC whose receive buffer fills pauses the
// switch port it is cabled to, on the priority RoCE rides, instead of dropping what arrives.
// When `xoff_frames` frames wait it sends a pause of `quanta`, sends it again before that time
// runs out for as long as more than `xon_frames` wait, and once no more than `xon_frames` wait
// sends one resume (0 quanta): pause_hysteresis.h counting frames. Pure: the caller passes the time and how many frames wait, sends
// what due() returns and says so (sent), so a frame the port did not take is asked for again.
namespace collide::replayer::engine {

struct LosslessConfig {
  bool enabled = false;        // off: the NIC never sends a pause
  uint32_t priority = 3;       // the priority it pauses (RoCE's), 0 to 7
  uint32_t xoff_frames = 128;  // frames waiting that make it pause its leaf port
  uint32_t xon_frames = 32;    // ... and at or below which it resumes it
  uint32_t quanta = 0xffff;    // each pause's time, in 512 bit times at the link's speed (to 65535)
};

// The engine's hold (the NIC's receive buffer in a drain pause) takes this many times
// xoff_frames: room past xoff catches what the leaf port sends before the pause reaches it,
// several times over. Held frames are the port's receive buffers: a replay's DPDK port gives each
// receive queue 32767 buffers for a ring of 4096 descriptors (replayer/dpdk/port_defaults.h;
// net_af_xdp fills its umem from the same pool), so even the largest hold, 4 x kMaxXoffFrames =
// 16384, leaves the ring a full refill and the pool's caches to spare.
inline constexpr uint32_t kHoldPerXoff = 4;
inline constexpr uint32_t kMaxXoffFrames = 4096;

// What makes the settings unusable, naming the field: a priority above 7, no xoff, xon not below
// xoff, xoff above kMaxXoffFrames, or a pause of no time or more than a frame can carry.
Status validate(const LosslessConfig& config);

// The largest NIC buffer a drain pause models (EngineConfig.drain_buffer_frames): the largest
// lossless hold, for the same reason (it is the port's receive buffers).
inline constexpr uint32_t kMaxDrainBufferFrames = kHoldPerXoff * kMaxXoffFrames;

// What makes a NIC buffer of `frames` unusable: more than kMaxDrainBufferFrames, or, lossless, no
// room above xoff_frames (the NIC would drop before it pauses).
Status validate_drain_buffer(uint32_t frames, const LosslessConfig& lossless);

struct PfcSenderCounters {
  uint64_t pauses_sent = 0;   // pause frames, first ones and refreshes
  uint64_t resumes_sent = 0;  // resume frames (0 quanta)
};

class PfcSender {
 public:
  PfcSender() = default;
  // `line_gbps`: the link's speed, which makes a quantum's length (the rate PfcPause uses).
  PfcSender(LosslessConfig config, double line_gbps, wire::MacAddress source);

  // The frame to send at `now` with `waiting` frames in the receive buffer: a pause, its
  // refresh, a resume, or none.
  std::optional<wire::PauseFrame> due(size_t waiting, transport::Nanos now) const;
  // `frame` (from due) went to the port at `now`.
  void sent(const wire::PauseFrame& frame, transport::Nanos now);
  // Whether the leaf port is held by our last pause.
  bool pausing() const { return hysteresis_.pausing(); }
  // When the pause in force must be sent again; none when not pausing.
  std::optional<transport::Nanos> refresh_at() const { return hysteresis_.refresh_at(); }
  const PfcSenderCounters& counters() const { return counters_; }

 private:
  wire::PauseFrame frame(uint16_t quanta) const;

  LosslessConfig config_;
  wire::MacAddress source_;
  PauseHysteresis hysteresis_;
  PfcSenderCounters counters_;
};

}  // namespace collide::replayer::engine
