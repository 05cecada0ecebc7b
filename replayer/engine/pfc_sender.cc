#include "replayer/engine/pfc_sender.h"

#include <fmt/format.h>

#include <algorithm>

namespace collide::replayer::engine {

Status validate(const LosslessConfig& c) {
  if (c.priority >= wire::kPriorities) {
    return invalid_argument(fmt::format("lossless.priority {} is above 7", c.priority));
  }
  if (c.xoff_frames == 0) return invalid_argument("lossless.xoff_frames is 0");
  if (c.xoff_frames > kMaxXoffFrames) {
    return invalid_argument(
        fmt::format("lossless.xoff_frames {} is above {}", c.xoff_frames, kMaxXoffFrames));
  }
  if (c.xon_frames >= c.xoff_frames) {
    return invalid_argument(fmt::format("lossless.xon_frames {} is not below xoff_frames {}",
                                        c.xon_frames, c.xoff_frames));
  }
  if (c.quanta == 0) return invalid_argument("lossless.quanta is 0: a pause of no time");
  if (c.quanta > 0xffff) {
    return invalid_argument(fmt::format("lossless.quanta {} is above 65535", c.quanta));
  }
  return {};
}

Status validate_drain_buffer(uint32_t frames, const LosslessConfig& lossless) {
  if (frames > kMaxDrainBufferFrames) {
    return invalid_argument(fmt::format("drain_buffer_frames {} is above {}", frames, kMaxDrainBufferFrames));
  }
  if (lossless.enabled && frames <= lossless.xoff_frames) {
    return invalid_argument(fmt::format("drain_buffer_frames {} leaves no room above lossless.xoff_frames {}: the "
                                        "NIC would drop before it pauses",
                                        frames, lossless.xoff_frames));
  }
  return {};
}

PfcSender::PfcSender(LosslessConfig config, double line_gbps, wire::MacAddress source)
    : config_(config), source_(source) {
  // Half the pause's time: the refresh reaches the switch long before the pause runs out, even
  // after a poll's delay and a full queue ahead of it on the wire.
  const transport::Nanos refresh_ns = std::max<transport::Nanos>(
      1, wire::pause_quanta_ns(static_cast<uint16_t>(config.quanta), line_gbps) / 2);
  hysteresis_ = PauseHysteresis(config.xoff_frames, config.xon_frames, refresh_ns);
}

wire::PauseFrame PfcSender::frame(uint16_t quanta) const {
  wire::PauseFrame f;
  f.source = source_;
  f.enabled = static_cast<uint8_t>(1u << config_.priority);
  f.quanta[config_.priority] = quanta;
  return f;
}

std::optional<wire::PauseFrame> PfcSender::due(size_t waiting, transport::Nanos now) const {
  if (!config_.enabled) return std::nullopt;
  switch (hysteresis_.due(waiting, now)) {
    case PauseHysteresis::Due::kPause:
      return frame(static_cast<uint16_t>(config_.quanta));
    case PauseHysteresis::Due::kResume:
      return frame(0);
    case PauseHysteresis::Due::kNothing:
      break;
  }
  return std::nullopt;
}

void PfcSender::sent(const wire::PauseFrame& f, transport::Nanos now) {
  const bool resume = f.quanta[config_.priority] == 0;
  hysteresis_.sent(resume ? PauseHysteresis::Due::kResume : PauseHysteresis::Due::kPause, now);
  ++(resume ? counters_.resumes_sent : counters_.pauses_sent);
}

}  // namespace collide::replayer::engine
