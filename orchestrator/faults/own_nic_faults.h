#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/faults/armed_faults.h"

// A real host's faults, armed by its agent on the host's own NICs instead of on a virtual
// fabric's switch ports.
namespace collide::orchestrator::faults {

// Arms `faults` (all aimed at this host's links) on a real host's own NICs, each on the one its
// link names (fault_nic.h: own_nic_of_fault; `interfaces` in rail order, in `netns`, "" for the
// agent's own). The replay's packet socket sees received frames before tc would act and sends past
// the qdiscs, so per-packet faults act on frames arriving (XDP ingress), flaps take the NIC down,
// slow receivers and send delays are the replayer's (for all of the host's NICs); what cannot act
// on a NIC (faults on frames leaving it, rate limits) is refused with a reason, before anything is
// armed. `options.site_of` is set here.
Result<std::unique_ptr<ArmedFaults>> arm_own_nic_faults(const std::vector<const v1::Fault*>& faults,
                                                        const std::string& netns,
                                                        const std::vector<std::string>& interfaces,
                                                        ArmOptions options);

}  // namespace collide::orchestrator::faults
