#include "replayer/transport/dcqcn.h"

#include <algorithm>

#include <fmt/format.h>

namespace collide::replayer::transport {

Status validate(const DcqcnConfig& c) {
  if (!(c.line_rate_gbps > 0) || !(c.min_rate_gbps > 0) || c.min_rate_gbps > c.line_rate_gbps) {
    return invalid_argument(fmt::format("DCQCN rates: need 0 < min {} <= line {} Gb/s",
                                        c.min_rate_gbps, c.line_rate_gbps));
  }
  if (!(c.g > 0 && c.g <= 1)) return invalid_argument("DCQCN g must be in (0, 1]");
  if (c.alpha_update_ns == 0 || c.rate_increase_ns == 0 || c.byte_counter_bytes == 0 ||
      c.cnp_interval_ns == 0) {
    return invalid_argument("DCQCN timers and byte counter must be positive");
  }
  return {};
}

DcqcnConfig scaled_to_line_rate(DcqcnConfig c, double line_rate_gbps) {
  const double slower = c.line_rate_gbps / line_rate_gbps;
  auto stretch = [slower](Nanos t) { return static_cast<Nanos>(static_cast<double>(t) * slower); };
  c.cnp_interval_ns = stretch(c.cnp_interval_ns);
  c.alpha_update_ns = stretch(c.alpha_update_ns);
  c.rate_increase_ns = stretch(c.rate_increase_ns);
  c.min_rate_gbps /= slower;
  c.additive_increase_gbps /= slower;
  c.hyper_increase_gbps /= slower;
  c.line_rate_gbps = line_rate_gbps;
  return c;
}

Dcqcn::Dcqcn(DcqcnConfig config, Nanos now)
    : config_(config),
      current_gbps_(config.line_rate_gbps),
      target_gbps_(config.line_rate_gbps),
      next_alpha_update_(now + config.alpha_update_ns),
      next_rate_increase_(now + config.rate_increase_ns) {}

void Dcqcn::on_cnp(Nanos now) {
  target_gbps_ = current_gbps_;
  current_gbps_ = std::max(config_.min_rate_gbps, current_gbps_ * (1 - alpha_ / 2));
  alpha_ = (1 - config_.g) * alpha_ + config_.g;
  cnp_in_period_ = true;
  // A cut restarts the climb from its first stage.
  timer_steps_ = byte_steps_ = 0;
  bytes_since_step_ = 0;
  next_alpha_update_ = now + config_.alpha_update_ns;
  next_rate_increase_ = now + config_.rate_increase_ns;
}

void Dcqcn::on_bytes_sent(uint64_t bytes, Nanos now) {
  on_time(now);
  bytes_since_step_ += bytes;
  while (bytes_since_step_ >= config_.byte_counter_bytes) {
    bytes_since_step_ -= config_.byte_counter_bytes;
    ++byte_steps_;
    increase();
  }
}

void Dcqcn::on_time(Nanos now) {
  while (next_alpha_update_ <= now) {
    if (!cnp_in_period_) alpha_ *= 1 - config_.g;
    cnp_in_period_ = false;
    next_alpha_update_ += config_.alpha_update_ns;
  }
  while (next_rate_increase_ <= now) {
    ++timer_steps_;
    increase();
    next_rate_increase_ += config_.rate_increase_ns;
  }
}

void Dcqcn::increase() {
  const uint32_t f = config_.fast_recovery_steps;
  if (std::max(timer_steps_, byte_steps_) < f) {
    // Fast recovery: halve the distance to the rate before the cut.
  } else if (std::min(timer_steps_, byte_steps_) > f) {
    const uint32_t i = std::min(timer_steps_, byte_steps_) - f;
    target_gbps_ += i * config_.hyper_increase_gbps;
  } else {
    target_gbps_ += config_.additive_increase_gbps;
  }
  target_gbps_ = std::min(target_gbps_, config_.line_rate_gbps);
  current_gbps_ = std::min(config_.line_rate_gbps, (target_gbps_ + current_gbps_) / 2);
}

}  // namespace collide::replayer::transport
