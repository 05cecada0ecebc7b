#pragma once

#include <cstdint>
#include <optional>

#include "replayer/transport/packet.h"
#include "replayer/wire/pfc_frame.h"

// A NIC honouring priority flow control: a PFC frame from the switch port it is cabled to that
// pauses the priority RoCE rides stops every RoCE frame it would send, for the frame's quanta at
// the link's speed; a later frame replaces the time left (0 quanta: resume now), as 802.1Qbb has
// it. Pure: the caller passes the time.
namespace collide::replayer::engine {

struct PfcConfig {
  uint8_t priority = 3;     // the lossless priority RoCE rides (3 on most RoCE fabrics)
  double line_gbps = 100;   // the link's speed, which sets a quantum's length (512 bit times)
};

struct PfcCounters {
  uint64_t pause_frames = 0;    // PFC or 802.3x frames received that named our priority
  uint64_t other_priority = 0;  // PFC frames for other priorities only (nothing to hold)
  uint64_t paused_ns = 0;       // time sending was held, up to the last call
};

class PfcPause {
 public:
  explicit PfcPause(PfcConfig config = {}) : config_(config) {}

  // A flow control frame arrived at `now`.
  void on_frame(const wire::PauseFrame& frame, transport::Nanos now);
  // Whether sending is held at `now` (and the held time counted up to it).
  bool holds(transport::Nanos now);
  // When the current pause ends; none when not paused.
  std::optional<transport::Nanos> until() const;
  const PfcCounters& counters() const { return counters_; }

 private:
  void account(transport::Nanos now);

  PfcConfig config_;
  PfcCounters counters_;
  transport::Nanos paused_until_ = 0;
  transport::Nanos accounted_to_ = 0;  // held time is counted up to here
};

}  // namespace collide::replayer::engine
