#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/testbed/testbed_plan.h"

// The faults one host arms for a run, behind one function so the way they are armed can change
// without the agent noticing. Whatever is armed stays armed exactly as long as the returned
// object: destroying it disarms, and the kernel removes the hooks if the process dies.
namespace collide::orchestrator::agent {

struct FaultCounts {
  std::string name;
  std::string kind;
  uint64_t packets_matched = 0;  // ground truth from the injector's counters
  uint64_t packets_acted = 0;
  uint64_t start_ns = 0;  // when it really held (CLOCK_MONOTONIC); 0: never
  uint64_t end_ns = 0;
};

class ArmedFaults {
 public:
  virtual ~ArmedFaults() = default;
  virtual size_t size() const = 0;
  virtual std::vector<FaultCounts> counts() const = 0;
  // Fault windows count from here: call it when the replay is told to go.
  virtual Status start() { return {}; }
};

// What a run's random draws depend on: the repetition and the scenario's Runs.seed (the same
// pair draws the same packets; fault_plan.h: draw_seed).
struct FaultDraw {
  uint32_t repetition = 0;
  uint64_t runs_seed = 0;
};

// Arms `faults` on the virtual fabric `plan`.
Result<std::unique_ptr<ArmedFaults>> arm_host_faults(const std::vector<v1::Fault>& faults,
                                                     const testbed::TestbedPlan& plan,
                                                     FaultDraw draw);

// The interface of a real host that a fault aimed at it names: its NIC n ("h1.nic1" or "h1.eth1";
// "h1" is NIC 0) among `interfaces`, the host's NICs in rail order; a NIC it does not have is an
// error naming the fault and the NICs there are.
Result<std::string> own_nic_interface(const v1::Fault& fault, const std::vector<std::string>& interfaces);

// Arms `faults` (all aimed at this host's links) on a real host's own NICs `interfaces` (in rail
// order, in `netns`, "" for the agent's own), each fault on the NIC its link names. The replay's packet socket sees received frames before tc would act
// and sends past the qdiscs, so per-packet faults act on frames arriving (XDP ingress), flaps
// take the NIC down, slow receivers and send delays are the replayer's; what cannot act on this
// NIC (faults on frames leaving it, rate limits) is refused with a reason.
Result<std::unique_ptr<ArmedFaults>> arm_own_nic_faults(const std::vector<v1::Fault>& faults,
                                                        const std::string& netns,
                                                        const std::vector<std::string>& interfaces,
                                                        FaultDraw draw);

}  // namespace collide::orchestrator::agent
