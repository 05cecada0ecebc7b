#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/result.h"
#include "ebpf/fault_maps.h"
#include "injectors/fault_rules.h"
#include "injectors/tc_link.h"

struct fault;        // the libbpf skeleton of ebpf/fault.bpf.c
struct ring_buffer;  // libbpf's ring buffer reader
struct bpf_link;

namespace collide::injectors {

struct FaultInjectorOptions {
  std::vector<FaultRule> rules;  // at most COLLIDE_FAULT_MAX_RULES, evaluated by priority
  Allowlist allow;
  bool events = false;           // write an event per action into the ring
  // Faults go inert this long after the last renewal; renewed every third of it while armed.
  std::chrono::milliseconds lease{3000};
  bool renew_lease = true;       // tests turn this off to watch an expired lease
};

struct FaultRuleCounters {
  uint32_t id = 0;
  uint64_t matched = 0;     // packets that matched inside the rule's window
  uint64_t acted = 0;       // packets the rule acted on
  uint64_t bytes_acted = 0;
  uint64_t first_ns = 0;    // CLOCK_MONOTONIC of the first and last action; 0: none yet
  uint64_t last_ns = 0;
};

struct FaultStats {
  uint64_t packets = 0;
  uint64_t allowed = 0;
  uint64_t inert = 0;
  uint64_t events_lost = 0;
};

// The eBPF fault injector (ebpf/fault.bpf.c): loads the program, attaches it to tc hooks,
// writes the rules, keeps the lease alive from a thread, and reads counters and events.
class FaultInjector {
 public:
  static Result<std::unique_ptr<FaultInjector>> load(FaultInjectorOptions options);
  ~FaultInjector();
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // On an interface of the calling thread's network namespace, until this object goes.
  Result<TcLink::Mode> attach(int ifindex, Direction direction);
  // Ingress through XDP instead of tc: drops happen before the kernel builds an skb. Held by a
  // BPF link, so the kernel detaches it when this process goes, even by SIGKILL. XDP cannot copy
  // a frame: refused when a rule duplicates.
  Status attach_xdp(int ifindex);
  // Writes the rules with windows counted from now, grants the lease and (unless told not to)
  // starts renewing it. Arming again restarts the windows and resets nothing else.
  Status arm();
  // Ends the lease now: every rule goes inert. Stops the renewals.
  Status disarm();
  // Sets the lease's expiry (CLOCK_MONOTONIC ns); for tests.
  Status set_lease_expiry(uint64_t expiry_ns);
  // CLOCK_MONOTONIC ns of the last arm(): the moment rule windows count from. 0 before.
  uint64_t armed_at_ns() const { return armed_at_ns_; }

  static uint64_t monotonic_ns();

  int program_fd(Direction direction) const;
  int xdp_program_fd() const;
  const std::vector<FaultRule>& rules() const { return rules_; }
  // In rule order (priority order).
  Result<std::vector<FaultRuleCounters>> counters() const;
  Result<FaultStats> stats() const;
  // Hands every event waiting in the ring to `sink`; returns how many there were.
  Result<size_t> drain_events(const std::function<void(const collide_fault_event&)>& sink);

 private:
  FaultInjector() = default;
  Status write_config();
  Status write_psn_lists();
  void renew_loop();
  void stop_renewal();

  fault* skel_ = nullptr;
  std::vector<FaultRule> rules_;
  FaultInjectorOptions options_;
  std::vector<TcLink> links_;
  std::vector<bpf_link*> xdp_links_;
  uint64_t armed_at_ns_ = 0;

  std::thread renewer_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;

  ::ring_buffer* ring_ = nullptr;
  std::function<void(const collide_fault_event&)> sink_;
};

}  // namespace collide::injectors
