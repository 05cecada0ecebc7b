#include "replayer/engine/pacer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace collide::replayer::engine {

Status validate(const PacerConfig& config) {
  if (!(config.gbps >= 0) || !std::isfinite(config.gbps)) {
    return invalid_argument(fmt::format("pacing rate {} Gb/s is not a rate", config.gbps));
  }
  if (config.gbps > 0 && config.burst_frames == 0) {
    return invalid_argument("pacing burst must be at least one frame");
  }
  if (config.gbps > 0 && config.frame_bytes == 0) return invalid_argument("pacing frame size is 0");
  return {};
}

Pacer::Pacer(const PacerConfig& config, transport::Nanos now) : updated_(now) {
  if (config.gbps <= 0) return;
  bytes_per_ns_ = config.gbps / 8;
  frame_cost_ = config.frame_bytes + kEthernetLineOverhead;
  depth_ = frame_cost_ * config.burst_frames;
  wake_tokens_ = frame_cost_ * std::max<uint32_t>(1, config.burst_frames / 4);
  tokens_ = depth_;  // a port that has been idle may send a burst at once
}

void Pacer::advance(transport::Nanos now) {
  if (!enabled() || now <= updated_) return;
  // One nanosecond's worth above the depth: next_send_time() rounds up to whole nanoseconds, and
  // what that rounding earns must not be thrown away (it would slow a 400G port by a few %).
  tokens_ = std::min(depth_ + bytes_per_ns_,
                     tokens_ + static_cast<double>(now - updated_) * bytes_per_ns_);
  updated_ = now;
}

void Pacer::on_sent(uint32_t frame_bytes) {
  if (!enabled()) return;
  tokens_ -= frame_bytes + kEthernetLineOverhead;
}

transport::Nanos Pacer::next_send_time() const { return time_holding(frame_cost_); }

transport::Nanos Pacer::wake_time() const { return time_holding(wake_tokens_); }

transport::Nanos Pacer::time_holding(double tokens) const {
  if (!enabled() || tokens_ >= tokens) return updated_;
  return updated_ + static_cast<transport::Nanos>(std::ceil((tokens - tokens_) / bytes_per_ns_));
}

}  // namespace collide::replayer::engine
