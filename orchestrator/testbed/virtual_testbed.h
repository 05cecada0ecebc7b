#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "orchestrator/testbed/testbed_plan.h"

namespace collide::orchestrator::testbed {

// A planned fabric brought to life with iproute2, ethtool and tc: namespaces, veth pairs with the
// plan's MACs and addresses, offloads off (one skb per frame, so per-packet faults and counts are
// exact), forwarding with ECMP hashing on L4 ports, routes, permanent neighbours and link shaping.
// Removed when the object goes, unless kept; a failed build removes what it made.
class VirtualTestbed {
 public:
  static Result<std::unique_ptr<VirtualTestbed>> create(TestbedPlan plan);
  ~VirtualTestbed();
  VirtualTestbed(const VirtualTestbed&) = delete;
  VirtualTestbed& operator=(const VirtualTestbed&) = delete;

  const TestbedPlan& plan() const { return plan_; }
  // Removes the fabric now, every step checked. A namespace that could not be removed is named in
  // the error and the testbed's owner record stays, so that the next run of this name (once this
  // process is gone) sweeps what is left instead of refusing to start. The destructor does the
  // same when this was not called, and can only log a failure.
  Status remove();
  // Leave the fabric up after this object goes (`collide testbed up`).
  void keep() { keep_ = true; }

 private:
  explicit VirtualTestbed(TestbedPlan plan) : plan_(std::move(plan)) {}
  Status build();

  TestbedPlan plan_;
  std::vector<std::string> created_;
  bool keep_ = false;
};

// Names of the testbeds whose namespaces exist on this machine.
Result<std::vector<std::string>> list_testbeds();
// Removes every namespace of testbed `name` (a crashed run's leftovers included).
Status remove_testbed(const std::string& name);

}  // namespace collide::orchestrator::testbed
