#include "replayer/engine/fault_hooks.h"

#include <algorithm>

namespace collide::replayer::engine {

using transport::Nanos;

void FaultHooks::start(Nanos now) {
  if (started_) return;
  started_ = now;
  seen_.assign(pauses_.size() + delays_.size(), std::nullopt);
}

Nanos FaultHooks::begin_of(std::chrono::nanoseconds offset) const {
  return *started_ + static_cast<Nanos>(offset.count());
}

Nanos FaultHooks::end_of(std::chrono::nanoseconds offset, std::chrono::nanoseconds length) const {
  return length.count() == 0 ? 0 : begin_of(offset) + static_cast<Nanos>(length.count());
}

bool FaultHooks::inside(Nanos now, std::chrono::nanoseconds offset,
                        std::chrono::nanoseconds length) const {
  if (!started_) return false;
  const Nanos end = end_of(offset, length);
  return now >= begin_of(offset) && (end == 0 || now < end);
}

bool FaultHooks::draining_paused(Nanos now) const {
  return std::any_of(pauses_.begin(), pauses_.end(),
                     [&](const DrainPause& p) { return mine(p.nic) && inside(now, p.start, p.duration); });
}

Nanos FaultHooks::send_delay(Nanos now) const {
  Nanos delay = 0;
  for (const SendDelay& d : delays_) {
    if (mine(d.nic) && inside(now, d.start, d.duration)) delay = std::max(delay, static_cast<Nanos>(d.delay.count()));
  }
  return delay;
}

std::optional<Nanos> FaultHooks::next_change(Nanos now) const {
  if (!started_) return std::nullopt;
  std::optional<Nanos> next;
  auto consider = [&](Nanos t) {
    if (t > now && (!next || t < *next)) next = t;
  };
  for (const DrainPause& p : pauses_) {
    if (!mine(p.nic)) continue;
    consider(begin_of(p.start));
    if (p.duration.count() != 0) consider(end_of(p.start, p.duration));
  }
  for (const SendDelay& d : delays_) {
    if (!mine(d.nic)) continue;
    consider(begin_of(d.start));
    if (d.duration.count() != 0) consider(end_of(d.start, d.duration));
  }
  return next;
}

void FaultHooks::observe(Nanos now) {
  if (!started_) return;
  auto note = [&](size_t slot, HookWindow::Kind kind, bool in_force) {
    std::optional<HookWindow>& w = seen_[slot];
    const auto index = static_cast<uint32_t>(kind == HookWindow::Kind::kDrainPause ? slot : slot - pauses_.size());
    if (in_force && !w) w = HookWindow{kind, now, 0, index};
    if (!in_force && w && w->end_ns == 0) w->end_ns = now;
  };
  for (size_t i = 0; i < pauses_.size(); ++i) {
    note(i, HookWindow::Kind::kDrainPause,
         mine(pauses_[i].nic) && inside(now, pauses_[i].start, pauses_[i].duration));
  }
  for (size_t i = 0; i < delays_.size(); ++i) {
    note(pauses_.size() + i, HookWindow::Kind::kSendDelay,
         mine(delays_[i].nic) && inside(now, delays_[i].start, delays_[i].duration));
  }
}

std::vector<HookWindow> FaultHooks::windows() const {
  std::vector<HookWindow> out;
  for (const auto& w : seen_) {
    if (w) out.push_back(*w);
  }
  return out;
}

}  // namespace collide::replayer::engine
