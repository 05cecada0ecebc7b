#include "orchestrator/testbed/pfc_port_state.h"

#include "replayer/wire/pfc_frame.h"

namespace collide::orchestrator::testbed {

int64_t pause_ns(uint16_t quanta, double gbps) {
  return static_cast<int64_t>(replayer::wire::pause_quanta_ns(quanta, gbps));
}

PfcPortState::PfcPortState(PfcPortConfig config)
    : config_(config),
      // Re-sent at half the pause's length, so the peer never runs out of pause in between.
      hysteresis_(config.xoff_bytes, config.xon_bytes,
                  static_cast<uint64_t>(pause_ns(config.quanta, config.gbps) / 2)) {}

void PfcPortState::on_peer_pause(uint16_t quanta, int64_t now) {
  ++counters_.pause_frames;
  paused_until_ = quanta == 0 ? now : now + pause_ns(quanta, config_.gbps);
}

bool PfcPortState::should_hold(int64_t now) {
  if (holding_ && now > last_look_) counters_.paused_ns += static_cast<uint64_t>(now - last_look_);
  last_look_ = now;
  const bool paused = now < paused_until_;
  if (recovering_until_ != 0) {
    if (now < recovering_until_) {
      holding_ = false;
      return false;
    }
    // Recovered: pauses count again from this look on (when the port really honours them, which
    // a late poll makes later than the restore time); a storm that goes on starts a new hold here.
    counters_.watchdog_events.back().restored_ns = now;
    recovering_until_ = 0;
    held_since_.reset();
  }
  if (!paused) {
    held_since_.reset();
    holding_ = false;
    return false;
  }
  if (!held_since_) held_since_ = now;
  if (config_.watchdog_detect_ns > 0 && now - *held_since_ >= config_.watchdog_detect_ns) {
    counters_.watchdog_events.push_back({*held_since_, now, 0});
    recovering_until_ = now + config_.watchdog_restore_ns;
    holding_ = false;
    return false;
  }
  holding_ = true;
  return true;
}

PfcPortState::Send PfcPortState::on_held_bytes(uint64_t held_bytes, int64_t now) {
  using Due = replayer::engine::PauseHysteresis::Due;
  const Due due = hysteresis_.due(held_bytes, static_cast<uint64_t>(now));
  if (due == Due::kNothing) return Send::kNothing;
  hysteresis_.sent(due, static_cast<uint64_t>(now));
  ++counters_.pause_frames_sent;
  return due == Due::kPause ? Send::kPause : Send::kResume;
}

}  // namespace collide::orchestrator::testbed
