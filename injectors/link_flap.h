#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "injectors/guardian.h"

// Link flaps: an interface taken administratively down and brought back up (its peer loses
// carrier meanwhile). Setting a link down removes its routes, its IPv6 addresses and its
// neighbour entries (permanent ones too), so these are recorded first and put back after up.
namespace collide::injectors {

// What an interface needs to be whole again after a flap.
struct LinkSnapshot {
  std::string netns;
  std::string ifname;
  bool was_up = false;                 // administratively up when the snapshot was taken
  std::vector<std::string> addresses;  // "10.0.0.1/24", for people and tests
  std::vector<std::string> routes;     // "10.8.0.0/16 via 10.0.0.2", likewise
  std::vector<std::string> neighbors;  // "10.0.0.2 lladdr 02:00:00:00:00:02", likewise
  // Link up, then `ip addr replace` of each address, `ip route replace` of each route that the
  // kernel does not recreate by itself (connected and local routes it does), and `ip neigh
  // replace` of each permanent neighbour entry.
  std::vector<UndoStep> restore;
};

// What iproute2 prints about a link and its namespace, as JSON.
struct LinkJson {
  std::string addresses;  // ip -j addr show dev X
  std::string routes4;    // ip -j -4 route show table all
  std::string routes6;    // ip -j -6 route show table all
  std::string neighbors;  // ip -j neigh show dev X nud permanent
};

// Builds a snapshot from that output (pure, so it can be tested on recorded text).
Result<LinkSnapshot> snapshot_from_json(const std::string& netns, const std::string& ifname,
                                        const LinkJson& json);
// Reads the interface's current addresses and routes.
Result<LinkSnapshot> take_snapshot(const std::string& netns, const std::string& ifname);

// When a link goes down and for how long. `every` unset: one flap.
struct FlapSchedule {
  std::chrono::nanoseconds down_for{0};
  std::optional<std::chrono::nanoseconds> every;
  std::chrono::nanoseconds start_after{0};
};

// `--flap DOWN_FOR[,EVERY]`: "2s" (once, down 2 s) or "500ms,5s" (down 500 ms every 5 s).
// Durations as parse_duration() of injectors/fault_rules.h reads them.
Result<FlapSchedule> parse_flap_spec(std::string_view text);

// A link held down until bring_up() or destruction, its restoration registered with a guardian
// before it went down.
class LinkDown {
 public:
  static Result<std::unique_ptr<LinkDown>> take_down(Guardian& guardian, const std::string& netns,
                                                     const std::string& ifname);
  // The same with a snapshot taken ahead (take_snapshot), so a scheduled flap starts on time:
  // reading addresses and routes costs several iproute2 runs.
  static Result<std::unique_ptr<LinkDown>> take_down(Guardian& guardian, LinkSnapshot snapshot);
  ~LinkDown();
  LinkDown(const LinkDown&) = delete;
  LinkDown& operator=(const LinkDown&) = delete;

  // Link up, addresses and routes back. Idempotent.
  void bring_up();
  const LinkSnapshot& snapshot() const { return snapshot_; }

 private:
  LinkDown(Guardian& guardian, LinkSnapshot snapshot, uint64_t undo_id)
      : guardian_(guardian), snapshot_(std::move(snapshot)), undo_id_(undo_id) {}
  Guardian& guardian_;
  LinkSnapshot snapshot_;
  uint64_t undo_id_;
  bool up_ = false;
};

// Flaps a link on a schedule from a thread of its own until stopped; the link is up and whole
// again when stop() returns.
class LinkFlapper {
 public:
  static Result<std::unique_ptr<LinkFlapper>> start(Guardian& guardian, std::string netns,
                                                    std::string ifname, FlapSchedule schedule);
  ~LinkFlapper();
  LinkFlapper(const LinkFlapper&) = delete;
  LinkFlapper& operator=(const LinkFlapper&) = delete;

  void stop();
  // For a one-shot schedule: waits until the flap is over. False on timeout.
  bool wait_finished(std::chrono::milliseconds timeout);
  int flaps() const;  // completed down-up cycles
  Status error() const;  // the first failure of the flapping thread, if any

 private:
  LinkFlapper(Guardian& guardian, std::string netns, std::string ifname, FlapSchedule schedule)
      : guardian_(guardian),
        netns_(std::move(netns)),
        ifname_(std::move(ifname)),
        schedule_(schedule) {}
  void run();
  // Sleeps until `deadline` or stop(); true if stopped.
  bool sleep_until(std::chrono::steady_clock::time_point deadline);

  Guardian& guardian_;
  std::string netns_;
  std::string ifname_;
  FlapSchedule schedule_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool finished_ = false;
  int flaps_ = 0;
  Status error_;
  std::thread thread_;
};

}  // namespace collide::injectors
