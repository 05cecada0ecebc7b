#pragma once

#include <cstdint>
#include <optional>

// When a receiver that is filling up pauses its link peer (802.1Qbb), whatever it counts: frames
// waiting in a NIC's receive buffer, or bytes a switch holds from one ingress port. At `xoff` it
// sends a pause; while it stays above `xon` it sends the pause again once `refresh_ns` has passed
// (half the pause's time, so the peer never runs out of it); at or below `xon` it sends one resume.
// Between the two thresholds nothing changes. Pure: the caller passes the level and the time,
// sends what due() asks for and reports it with sent(), so a frame that could not go is asked for
// again.
namespace collide::replayer::engine {

class PauseHysteresis {
 public:
  enum class Due { kNothing, kPause, kResume };

  PauseHysteresis() = default;
  PauseHysteresis(uint64_t xoff, uint64_t xon, uint64_t refresh_ns)
      : xoff_(xoff), xon_(xon), refresh_ns_(refresh_ns) {}

  Due due(uint64_t level, uint64_t now) const {
    if (!pausing_) return level >= xoff_ ? Due::kPause : Due::kNothing;
    if (level <= xon_) return Due::kResume;
    return now >= last_pause_at_ + refresh_ns_ ? Due::kPause : Due::kNothing;
  }
  void sent(Due what, uint64_t now) {
    if (what == Due::kNothing) return;
    pausing_ = what == Due::kPause;
    if (pausing_) last_pause_at_ = now;
  }
  // Whether the peer is held by our last pause.
  bool pausing() const { return pausing_; }
  // When the pause in force must be sent again; none when not pausing.
  std::optional<uint64_t> refresh_at() const {
    if (!pausing_) return std::nullopt;
    return last_pause_at_ + refresh_ns_;
  }

 private:
  uint64_t xoff_ = 0;
  uint64_t xon_ = 0;
  uint64_t refresh_ns_ = 0;
  bool pausing_ = false;
  uint64_t last_pause_at_ = 0;
};

}  // namespace collide::replayer::engine
