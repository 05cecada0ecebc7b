#include "replayer/engine/pfc_pause.h"

#include <algorithm>

namespace collide::replayer::engine {

void PfcPause::account(transport::Nanos now) {
  // Held from where the count stands to the earlier of now and the pause's end.
  const transport::Nanos end = std::min(now, paused_until_);
  if (end > accounted_to_) counters_.paused_ns += end - accounted_to_;
  accounted_to_ = std::max(accounted_to_, now);
}

void PfcPause::on_frame(const wire::PauseFrame& frame, transport::Nanos now) {
  if (!frame.pauses(config_.priority)) {
    ++counters_.other_priority;
    return;
  }
  account(now);
  ++counters_.pause_frames;
  // The new time replaces what was left of the old one (a refresh, or XON with 0).
  paused_until_ = now + wire::pause_quanta_ns(frame.quanta[config_.priority], config_.line_gbps);
}

bool PfcPause::holds(transport::Nanos now) {
  account(now);
  return now < paused_until_;
}

std::optional<transport::Nanos> PfcPause::until() const {
  if (paused_until_ <= accounted_to_) return std::nullopt;
  return paused_until_;
}

}  // namespace collide::replayer::engine
