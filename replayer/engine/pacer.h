#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/result.h"
#include "replayer/transport/packet.h"

namespace collide::replayer::engine {

struct PacerConfig {
  double gbps = 0;              // line rate; 0 turns pacing off
  uint32_t burst_frames = 32;   // frames that may leave back to back after an idle spell
  uint32_t frame_bytes = 1100;  // the largest frame (sets the bucket's depth and a send's cost)
};

// Bytes a frame occupies on an Ethernet link besides itself: preamble and start delimiter (8),
// FCS (4) and the minimum inter-frame gap (12). Line rate counts them.
inline constexpr uint32_t kEthernetLineOverhead = 24;

Status validate(const PacerConfig& config);

// A port's transmit pacer: a token bucket in line bytes, filled at the line rate and as deep as
// `burst_frames` full frames. A frame may leave while the bucket holds a full frame's worth; its
// real size (plus the Ethernet overhead) is then taken out. Frames thus leave in bursts of at most
// `burst_frames`, and over any interval the port sends no more than rate x interval + one burst.
// Pure: time comes from the caller (the engine's clock, TSC-based in `collide replay`).
class Pacer {
 public:
  Pacer() = default;  // off
  Pacer(const PacerConfig& config, transport::Nanos now);

  bool enabled() const { return bytes_per_ns_ > 0; }
  // Adds the tokens earned since the last call.
  void advance(transport::Nanos now);
  bool may_send() const { return !enabled() || tokens_ >= frame_cost_; }
  // How many of the largest frames may leave back to back now (no limit when pacing is off):
  // the same bound may_send() gives, for a sender that builds several frames in one go.
  size_t frames_allowed() const {
    return enabled() ? static_cast<size_t>(std::max(0.0, tokens_ / frame_cost_)) : SIZE_MAX;
  }
  // Charges a frame of `frame_bytes` (as built, without the line overhead).
  void on_sent(uint32_t frame_bytes);
  // When may_send() turns true if nothing else is sent (now if it already is).
  transport::Nanos next_send_time() const;
  // When a sender waiting for the bucket should look again: once it holds a quarter of its depth
  // (at least one frame). A slow paced port then wakes once per few frames rather than once per
  // frame (at 0.5 Gb/s a frame leaves every 18 us), which on a machine shared by many engines is
  // the difference between sleeping and spinning; what leaves per wake stays within the burst.
  transport::Nanos wake_time() const;
  double tokens() const { return tokens_; }

 private:
  // When the bucket holds `tokens` if nothing is sent (now if it does).
  transport::Nanos time_holding(double tokens) const;

  double bytes_per_ns_ = 0;
  double depth_ = 0;
  double frame_cost_ = 0;
  double wake_tokens_ = 0;  // what the bucket holds when wake_time() comes
  double tokens_ = 0;
  transport::Nanos updated_ = 0;
};

}  // namespace collide::replayer::engine
