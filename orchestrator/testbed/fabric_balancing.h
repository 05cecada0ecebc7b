#pragma once

#include <memory>
#include <string>

#include "collide/testbed.pb.h"
#include "common/result.h"
#include "injectors/fabric_balance.h"
#include "orchestrator/testbed/testbed_plan.h"

// A virtual fabric's load balancing (VirtualTestbedSpec.load_balancing): the balancing program on
// tc ingress of every leaf port that faces a host, where a frame's uplink is chosen. ecmp needs no
// program (the kernel's five-tuple hash), so a fabric that never leaves ecmp loads none and runs
// in a build without eBPF; qp-hash and spray are refused there with a message that says so.
namespace collide::orchestrator::testbed {

using LoadBalancing = v1::VirtualTestbedSpec::LoadBalancing;

// "ecmp", "qp-hash", "spray": as a scenario spells them.
std::string load_balancing_name(LoadBalancing mode);
injectors::Balancing balancing_of(LoadBalancing mode);

class FabricBalancing {
 public:
  // Loads and attaches the program on `plan`'s leaves, in `mode`. The links go with this object,
  // or with the process, or with the namespaces.
  static Result<std::unique_ptr<FabricBalancing>> attach(const TestbedPlan& plan, LoadBalancing mode,
                                                         uint64_t seed);
  // Every attached port at once, through the program's map.
  Status set(LoadBalancing mode, uint64_t seed);
  Result<injectors::FabricBalanceCounts> counts() const { return balancer_->counts(); }

 private:
  explicit FabricBalancing(std::unique_ptr<injectors::FabricBalancer> b) : balancer_(std::move(b)) {}
  std::unique_ptr<injectors::FabricBalancer> balancer_;
};

}  // namespace collide::orchestrator::testbed
