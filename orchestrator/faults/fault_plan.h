#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collide/replay.pb.h"
#include "collide/scenario.pb.h"
#include "common/result.h"
#include "injectors/fault_rules.h"
#include "injectors/pfc_storm.h"
#include "injectors/tc_link.h"  // Direction
#include "orchestrator/testbed/testbed_plan.h"

// Where and how each fault of a run acts on a virtual testbed, worked out before anything is
// touched: pure, so it is unit-tested without root.
//
// Host links ("h1.nic2", or "h1.eth2" by the host's interface; "h1" alone is NIC 0, see
// testbed/link_names.h): the leaf port facing that host NIC. The NIC itself belongs to the
// replayer (DPDK), so faults act one hop away, as a faulty cable or switch port would: frames
// to the host leave the leaf port (egress), frames from it enter it (ingress).
// Fabric links ("leaf0-spine1"): the leaf's port towards the spine. Towards the hosts means
// down the fabric (the spine's frames entering the leaf: ingress); from the hosts means up
// (leaving the leaf: egress). A rate limit going down shapes the spine's egress, so no ifb is
// needed. A link flap takes the port down administratively; its peer loses carrier.
// Slow receivers and send delays are not on the wire: the host's replayer plays them.
namespace collide::orchestrator::faults {

// One interface and the directions a fault acts in on it.
struct FaultHook {
  std::string netns;
  std::string ifname;
  injectors::Direction direction = injectors::Direction::kIngress;
  // Ingress through XDP rather than tc: on a real host's own NIC, where a packet socket would
  // see frames before tc ingress could drop them.
  bool xdp = false;
};

struct FaultSite {
  bool host_link = false;
  uint32_t host = 0;      // host links: the host's index
  uint32_t nic = 0;
  // The leaf end of the link (3-tier: the spine end of a spine - super-spine link).
  std::string leaf_netns;
  std::string leaf_ifname;
  std::string peer_netns;   // the other end (the host NIC, the spine or the super-spine port)
  std::string peer_ifname;
  std::vector<FaultHook> hooks;  // for per-packet faults, by the fault's direction
  // The host's own NIC rather than the switch port facing it (a real host): `leaf_*` name the
  // NIC, and frames to the host arrive there instead of leaving.
  bool own_nic = false;
};

// "h1", "h1.nic3", "h1.eth3" or "leaf0-spine1" on `plan`, with the fault's direction. A NIC the
// host does not have is an error that lists the ones it has.
Result<FaultSite> resolve_site(const testbed::TestbedPlan& plan, const std::string& link,
                               v1::Fault::Direction direction);

// Whether the replayer rather than the fabric plays the fault.
bool is_replayer_fault(const v1::Fault& fault);
// Whether the fault is a per-packet decision of the eBPF rule engine.
bool is_packet_fault(const v1::Fault& fault);
// A fault's kind as reports print it ("loss", "link-flap", "slow-receiver").
std::string kind_name(v1::Fault::Kind kind);

// A PFC storm's frames: the device they leave from and what they ask for.
struct StormPlan {
  std::string netns;  // "": the caller's own (a real host's agent)
  std::string ifname;
  injectors::PfcStormOptions options;
};

// Where a KIND_PFC_STORM fault sends from: a host link's host NIC (pausing the leaf port it is
// cabled to), a real host's own NIC, or a fabric link's leaf port (pausing the spine's port
// towards that leaf); its priorities, quanta, rate and duration as the scenario has them (the
// scenario's defaults filled in), checked.
Result<StormPlan> storm_plan(const v1::Fault& fault, const FaultSite& site);

// The eBPF rule for a per-packet fault: the decision, the action, the window counted from the
// moment the rules are armed plus `shift` (negative when the run started before arming), the
// seed offset by the repetition (the same repetition drops the same packets, another other ones)
// and by the scenario's Runs.seed (draw_seed).
Result<injectors::FaultRule> packet_rule(const v1::Fault& fault, uint32_t repetition,
                                         std::chrono::nanoseconds shift, uint64_t runs_seed = 0);

// The seed of a fault's random draws in one repetition: its own seed plus the repetition, and,
// when the scenario sets Runs.seed, a SplitMix64 mix of that seed, so that two scenario seeds give
// unrelated draws and the same seed the same draws. Runs.seed 0 leaves each fault its own seed.
uint64_t draw_seed(uint64_t fault_seed, uint64_t runs_seed, uint32_t repetition);

// A run's faults, split by who arms them: each host's own link (what that host's agent arms,
// and the replayer hooks it runs) and the fabric's links (the orchestrator's part).
struct SplitFaults {
  std::map<uint32_t, std::vector<const v1::Fault*>> by_host;
  std::vector<const v1::Fault*> fabric;
};
Result<SplitFaults> split_faults(const std::vector<const v1::Fault*>& faults,
                                 const testbed::TestbedPlan& plan);

// The faults a host's replayer plays itself (slow receiver, send delay): those aimed at any of its
// links.
std::vector<const v1::Fault*> replayer_faults_of_host(const std::vector<const v1::Fault*>& faults,
                                                     uint32_t host);

// The window a replayer fault plays, as its host's replay is asked to: aimed at one NIC
// ("h1.nic2") it holds that NIC's engines alone, aimed at a host ("h1") all of them (a host too
// busy for every NIC).
v1::HookWindowSpec replayer_hook_window(const v1::Fault& f);

// The `collide replay` flags that play a host's replayer faults (--drain-pause, --send-delay),
// from the faults aimed at that host's link; others are ignored.
std::vector<std::string> replayer_hook_flags(const std::vector<const v1::Fault*>& faults,
                                             uint32_t host);

}  // namespace collide::orchestrator::faults
