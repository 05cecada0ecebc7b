#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collide/testbed.pb.h"
#include "common/result.h"

// The egress queue of one port of a virtual fabric, and the kernel qdiscs that make it.
//
// A switch port is a line rate, a buffer and, on RoCE fabrics, WRED-style ECN marking. A veth has
// none of these, so each is built from a qdisc on the port's side of the veth:
// - tbf at the line rate: the queue builds where a switch's would, in front of a slower link;
// - tbf's own queue (a bfifo of `limit` bytes) is the buffer: tail drop at its end;
// - with an ECN profile, WRED-style marking on the queue's depth. The kernel's RED qdisc in ECN
//   mode would be the natural child of tbf, but kernels are built without it (this project's
//   reference machine is), so a tc program on the port's egress marks instead, on a model of the
//   same queue (port_ecn_marker.h, ebpf/port_ecn.bpf.c).
// Ports of a tier with no profile keep the plain shaper of host_link_gbps / fabric_link_gbps.
//
// On a fabric with PFC settings a shaped switch port has two queues, as a switch port has one per
// priority: the lossless priority's and one for everything else, so that a pause holds RoCE alone
// and other traffic stays lossy beside it. The root is then an HTB at the line rate (tc's prio
// and ets qdiscs are not built into every kernel; HTB is) with two classes; a u32 filter sends
// IPv4 frames of the lossless priority (DSCP / 8) to the first, whose tbf is the pause gate
// (qdisc_netlink.h) and whose bfifo is the buffer; the rest go to the second, a bfifo of the same
// size. The lossless class goes first when both have frames, as a switch's strict priority
// would have it.
//
// A leaf port towards a host always has a queue, shaped or not. The host's end of the veth runs
// the AF_XDP program, and a veth then hands frames over through a ring of 256; on a machine short
// of cores the host's softirq falls behind and, with no queue on the leaf's port, the veth drops
// what does not fit (a real NIC has thousands of descriptors). With a qdisc there, the veth stops
// the port's queue instead and the frames wait in it (kernels from 6.16 on), so the replay's own
// slowness does not turn into losses that no fault made. Measured on the demo's selective-repeat
// variant: 1060-1232 such drops and 6-56 timeouts per 5 repetitions without the queue, none and
// 9-14 (the fault's) with it.
namespace collide::orchestrator::testbed {

// The unshaped leaf port's queue towards a host, in frames (a pfifo).
inline constexpr uint32_t kHostPortQueueFrames = 1024;

// Which ports a profile applies to; the names are what results and reports call the tiers.
inline constexpr const char* kTierHostNic = "host";        // a host's NIC (never a profile)
inline constexpr const char* kTierLeafDown = "leaf_down";  // leaf ports towards the hosts
inline constexpr const char* kTierLeafUp = "leaf_up";      // leaf ports towards the spines
inline constexpr const char* kTierSpineDown = "spine_down";
inline constexpr const char* kTierSpineUp = "spine_up";      // 3-tier: towards the super-spines
inline constexpr const char* kTierSuperDown = "super_down";  // 3-tier: super-spine ports

struct PortQueue {
  std::string tier;
  double gbps = 0;            // 0: unshaped
  bool profiled = false;      // false: today's plain shaper (rate only)
  uint64_t buffer_bytes = 0;  // profiled: the queue's end
  bool ecn = false;
  uint64_t kmin_bytes = 0;
  uint64_t kmax_bytes = 0;
  double pmax = 0;
  // Set on switch ports of a fabric with PFC settings: two queues, this priority's apart.
  std::optional<uint32_t> lossless_priority = std::nullopt;
};

// The priority a virtual switch gives a frame: DSCP / 8, the class-selector mapping switches
// trusting DSCP start from (DSCP 24-31, RoCE's 26 among them, are priority 3).
inline constexpr uint32_t priority_of_dscp(uint32_t dscp) { return dscp >> 3; }

// Which frames ride a two-queue port's lossless queue: IPv4 with (TOS & mask) == value. A mask of
// 0 matches every frame (a port of one queue).
struct TosMatch {
  uint8_t mask = 0;
  uint8_t value = 0;
};

// The frames of `priority` by priority_of_dscp: the TOS byte's top three bits.
TosMatch priority_tos(uint32_t priority);

// A profile's field and what is wrong with it, the field relative to VirtualTestbedSpec
// ("leaf_up.ecn.kmax_bytes"), so that a scenario can point at its line.
struct ProfileError {
  std::string field;
  std::string what;
};

// Kmin <= Kmax <= buffer, Pmax in (0, 1], no negative rate; the first fault found.
std::optional<ProfileError> check_port_profiles(const v1::VirtualTestbedSpec& spec);

// The queue of a port of `tier`: `profile` when the spec sets one, else the link's plain rate.
PortQueue port_queue(const std::string& tier, const v1::PortProfile* profile, double link_gbps);

// The buffer of a port with the plain shaper (no profile) at `gbps`.
uint64_t plain_buffer_bytes(double gbps);

// What the profiled shaper lets through at once; the marker's model of the queue leaves it out.
uint64_t shaper_burst_bytes(const PortQueue& queue, uint32_t mtu);

// What a port's tbf is made of, as port_qdisc_commands sets it: the root of a port of one queue,
// the lossless class's gate of a port of two.
struct TbfShape {
  uint64_t rate_bytes_per_s = 0;
  uint32_t burst_bytes = 0;
  uint32_t limit_bytes = 0;  // the child bfifo's size: the port's buffer
  // The largest frame the port carries (MTU and Ethernet header): tbf drops any frame longer than
  // its burst, so a held port's burst shrinks to this and no further (qdisc_netlink.h).
  uint32_t max_frame_bytes = 0;
};

// The tbf of a shaped port (queue.gbps > 0); port_qdisc_commands writes the same numbers.
TbfShape tbf_shape(const PortQueue& queue, uint32_t mtu);

// The tbf a pause holds: on a port of one queue its root tbf (handle 1:), on a port of two the
// lossless class's (handle 10:, under class 1:10), with the same shape. `tos` says which frames
// queue behind it.
struct PauseGate {
  uint32_t handle = 0;  // tc handles as the kernel has them: major << 16 | minor
  uint32_t parent = 0;  // TC_H_ROOT for a root tbf
  TbfShape shape;
  TosMatch tos;
};
PauseGate pause_gate(const PortQueue& queue, uint32_t mtu);

// The tc command lines (argv) that give interface `ifname` in namespace `netns` this queue; for an
// unshaped port none, or the plain queue of a leaf port towards a host. `mtu` sizes the shaper's
// burst.
std::vector<std::vector<std::string>> port_qdisc_commands(const std::string& netns,
                                                          const std::string& ifname,
                                                          const PortQueue& queue, uint32_t mtu);

// Runs port_qdisc_commands; an error says which port.
Status apply_port_queue(const std::string& netns, const std::string& ifname, const PortQueue& queue,
                        uint32_t mtu);

}  // namespace collide::orchestrator::testbed
