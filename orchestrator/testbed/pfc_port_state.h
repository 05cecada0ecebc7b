#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "replayer/engine/pause_hysteresis.h"

// One switch port's priority flow control, both ways, for the lossless priority; pure (the caller
// passes the time, in nanoseconds of one monotonic clock), so that pausing, resuming and the
// watchdog are unit-tested without a fabric.
// - As an egress: its peer's pause frames hold the port's queue for their quanta (a later frame
//   replaces the time left; 0 quanta resumes now), as 802.1Qbb has it.
// - As an ingress: the switch pauses the peer while it holds more than xoff bytes that came in
//   through this port, keeps the pause alive before it runs out, and resumes the peer once it
//   holds no more than xon bytes (the hosts' hysteresis, replayer/engine/pause_hysteresis.h,
//   counting bytes).
// - The watchdog: a queue held without a break for `detect` is taken as stormed or deadlocked;
//   for `restore` the port then ignores pauses (counting them still), and honours them again after.
namespace collide::orchestrator::testbed {

struct PfcPortConfig {
  double gbps = 0;               // the link's rate: a quantum is 512 bit times at it
  uint16_t quanta = 0xffff;      // what this port's own pauses ask for
  uint64_t xoff_bytes = 0;
  uint64_t xon_bytes = 0;
  int64_t watchdog_detect_ns = 0;  // 0: no watchdog
  int64_t watchdog_restore_ns = 0;
};

struct WatchdogEvent {
  int64_t held_since_ns = 0;
  int64_t detected_ns = 0;
  int64_t restored_ns = 0;  // 0: still recovering when counted
};

struct PfcPortCounters {
  uint64_t pause_frames = 0;       // the peer's frames that paused (or resumed) this port
  uint64_t paused_ns = 0;          // time the queue was held by them
  uint64_t pause_frames_sent = 0;  // pauses and resumes this port sent its peer
  std::vector<WatchdogEvent> watchdog_events;
  // Kept by the switches, which see the whole fabric: times this queue was found in a cycle of
  // paused queues (a PFC deadlock, pause_cycle.h), and the time it spent in one.
  uint64_t deadlocks = 0;
  uint64_t deadlocked_ns = 0;
};

// How long `quanta` pause at `gbps`.
int64_t pause_ns(uint16_t quanta, double gbps);

class PfcPortState {
 public:
  enum class Send { kNothing, kPause, kResume };

  explicit PfcPortState(PfcPortConfig config);

  // The peer's frame for our priority arrived at `now`.
  void on_peer_pause(uint16_t quanta, int64_t now);
  // Whether the queue is to be held at `now`; runs the watchdog and counts held time.
  bool should_hold(int64_t now);
  // What to send the peer now that the switch holds `held_bytes` that came in through this port.
  Send on_held_bytes(uint64_t held_bytes, int64_t now);
  // Whether the peer is paused by us (a pause sent and no resume since).
  bool pausing_peer() const { return hysteresis_.pausing(); }
  // Counters, held time counted up to the last should_hold.
  const PfcPortCounters& counters() const { return counters_; }

 private:
  PfcPortConfig config_;
  PfcPortCounters counters_;
  int64_t paused_until_ = 0;      // the peer's pause runs to here
  std::optional<int64_t> held_since_;  // the current unbroken hold began here
  int64_t recovering_until_ = 0;  // the watchdog ignores pauses until here
  int64_t last_look_ = 0;         // held time is counted up to here
  bool holding_ = false;          // as of the last look
  replayer::engine::PauseHysteresis hysteresis_;
};

}  // namespace collide::orchestrator::testbed
