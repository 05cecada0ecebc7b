#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/result.h"
#include "orchestrator/testbed/pfc_port_state.h"
#include "orchestrator/testbed/pfc_settings.h"
#include "orchestrator/testbed/testbed_plan.h"

// Lossless mode on a virtual fabric's switches, for the length of a run: one thread looks after
// every switch, as a switch's PFC logic would.
// - A pause frame arriving at a port holds that port's lossless queue for its quanta
//   (SwitchPortIo::hold: the frames wait, nothing is dropped; other traffic goes on in the port's
//   other queue) and a resume, or the end of the quanta, releases it.
// - Every poll it reads each port's backlog (one netlink dump per switch) and, from the bytes each
//   ingress port handed to each lossless queue (PortFeeds, counted on the ports' egress), how much
//   of what the switch holds came in through each port; a port whose share passes xoff gets pause frames
//   sent to its peer, refreshed while it stays above xon, and a resume below (pfc_port_state.h).
//   So pauses spread hop by hop towards the senders, as on a real lossless fabric.
// - The watchdog, when configured, releases a queue held without a break for too long.
// - Every poll it also looks for a deadlock: a cycle of held queues, each paused by a peer that
//   holds bytes waiting in the next (pause_cycle.h), and counts each port's time in one.
// The loop's latency is the poll period plus a pause frame's way; pause frames are acted on as
// they arrive (the thread waits on their sockets), backlogs are read once per period.
namespace collide::orchestrator::testbed {

// One switch port's PFC over a run, named as reports name ports.
struct PfcPortResult {
  std::string link;  // "leaf0-spine1"
  std::string end;   // the switch: "leaf0"
  PfcPortCounters counters;  // watchdog times in nanoseconds since start()
};

class PfcSwitches {
 public:
  // Starts on every switch of `plan` (all its ports must be shaped: a pause gate to hold).
  static Result<std::unique_ptr<PfcSwitches>> start(const TestbedPlan& plan, const ResolvedPfc& pfc);
  ~PfcSwitches();
  PfcSwitches(const PfcSwitches&) = delete;
  PfcSwitches& operator=(const PfcSwitches&) = delete;

  // Stops, gives every held queue its rate back, and returns each port's counters; an error when
  // the loop failed during the run (the fabric was then not lossless from that moment).
  Result<std::vector<PfcPortResult>> finish();

 private:
  struct Switch;
  PfcSwitches() = default;
  void run();
  Status look_at_pauses(Switch& s, int64_t now);
  Status poll(Switch& s, int64_t now);
  void look_for_deadlock(int64_t now);
  Status release_all();

  ResolvedPfc pfc_;
  std::vector<std::unique_ptr<Switch>> switches_;
  int64_t t0_ns_ = 0;
  int64_t last_deadlock_look_ns_ = 0;
  size_t port_count_ = 0;  // switch ports of the whole fabric, each with its own id
  std::atomic<bool> stop_{false};
  Status failure_;  // the loop's first error (read after join)
  std::thread thread_;
};

}  // namespace collide::orchestrator::testbed
