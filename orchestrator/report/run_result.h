#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/report/port_stats.h"

#include "collide/results.pb.h"
#include "collide/trace.pb.h"

// What one run (a variant, one repetition) produced, as the report reads it: every op of every
// rank with its start and end on one time base, and what the injectors did.
namespace collide::orchestrator::report {

struct OpTiming {
  uint32_t rank = 0;
  uint64_t op_index = 0;
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  std::string comm;
  uint32_t comm_size = 0;
  uint64_t bytes = 0;
  // Known when the runner read them from the trace; the report prints "-" otherwise.
  v1::DataType datatype = v1::DATA_TYPE_UNSPECIFIED;
  v1::ReduceOp reduce_op = v1::REDUCE_OP_UNSPECIFIED;
  uint32_t iteration = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool failed = false;
  // The op's time in the job the trace was taken from (Op.measured_duration_ns: NCCL Inspector's
  // coll_exec_time_us, Flight Recorder's duration_ms, Kineto's dur), when the trace has it; 0 if not.
  uint64_t production_ns = 0;
};

struct FaultWindow {
  std::string name;
  std::string kind;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t packets_matched = 0;  // ground truth from the injector's counters
  uint64_t packets_acted = 0;
};

// What one end of a link counted over a run (the kernel's interface counters, as deltas).
struct LinkEndCounters {
  uint64_t tx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t rx_packets = 0;
  // Frames the interface dropped. A switch port's tx_dropped towards a host counts the frames the
  // host's receive ring had no room for (a veth hands frames to its peer's ring; a real NIC's
  // would count them as missed): the host lost them, not the fabric.
  uint64_t tx_dropped = 0;
  uint64_t rx_dropped = 0;
};

// One link of a virtual testbed and what it carried during a run. The lower end is the host NIC
// (or the leaf of a leaf-spine link, the spine of a spine - super-spine link), the upper end the
// switch above it.
struct FabricLink {
  std::string name;   // "h1.nic2-leaf2" or "leaf0-spine1"
  std::string lower;  // "h1.nic2" or "leaf0"
  std::string upper;  // "leaf2" or "spine1"
  bool host_link = false;
  uint32_t leaf = 0;   // the leaf on the link
  uint32_t rail = 0;   // that leaf's rail (the NIC index of the hosts under it)
  uint32_t spine = 0;  // fabric links: the spine
  LinkEndCounters lower_end;
  LinkEndCounters upper_end;
  // 3-tier: a spine - super-spine link (lower the spine, upper the super-spine; `leaf` unset).
  bool spine_link = false;
  uint32_t super_spine = 0;
  uint32_t pod = 0;  // spine - super-spine links: the spine's pod
};

// The least time the run's job needs on its fabric at line rate (orchestrator/run/roofline.h).
struct Roofline {
  double seconds = 0;        // 0: unknown (no shaped port, real hosts, or the trace's own timing)
  std::string bottleneck;    // where: "h1.nic0 send", "leaf0 uplinks", ...
  uint64_t bottleneck_bytes = 0;
  double bottleneck_gbps = 0;
  bool known() const { return seconds > 0; }
};

struct RunResult {
  std::string variant;  // "baseline" or a variant's name
  uint32_t repetition = 0;
  // The wall-clock instant the ranks were told to start at; unset for a run never started.
  std::chrono::system_clock::time_point started{};
  bool failed = false;
  // Stopped part-way because collide run was told to stop (SIGTERM, SIGINT): the collectives that
  // every rank finished before the stop are measured like any other.
  bool interrupted = false;
  std::string failure;
  std::vector<OpTiming> ops;
  std::vector<FaultWindow> faults;
  uint64_t retransmitted_packets = 0;
  uint64_t timeouts = 0;
  uint64_t packets_sent = 0;
  std::vector<FabricLink> fabric_links;  // a virtual testbed's links; empty on real hosts
  std::vector<v1::NicTraffic> nics;      // every host's NICs, as their engines counted
  std::vector<PortStats> ports;          // a virtual testbed's switch ports, sampled through the run
  Roofline roofline;                     // of the run's job on its fabric
};

}  // namespace collide::orchestrator::report
