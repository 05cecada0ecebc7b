#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.h"
#include "injectors/tc_link.h"

struct fabric_balance;  // the libbpf skeleton

namespace collide::injectors {

// How a virtual switch spreads RoCEv2 frames over equal-cost uplinks (ebpf/fabric_balance.bpf.c).
enum class Balancing {
  kEcmp,    // the kernel's five-tuple hash (the QP's UDP source port decides)
  kQpHash,  // a hash of the BTH destination QP and destination IP
  kSpray,   // a fresh seeded draw per packet
};

struct FabricBalanceCounts {
  uint64_t rehashed = 0;  // RoCEv2 frames whose flow hash the program set
  uint64_t passed = 0;    // frames left to the kernel's own hash
};

// The balancing program: loaded once, attached on tc ingress of a switch's host-facing ports,
// where it sets the flow hash the kernel's multipath routing then follows. The mode lives in a
// map, so set_mode switches every attached port at once without re-attaching.
class FabricBalancer {
 public:
  static Result<std::unique_ptr<FabricBalancer>> load(Balancing mode, uint64_t seed);
  ~FabricBalancer();
  FabricBalancer(const FabricBalancer&) = delete;
  FabricBalancer& operator=(const FabricBalancer&) = delete;

  Status set_mode(Balancing mode, uint64_t seed);
  // On tc ingress of an interface of the calling thread's network namespace, until this object
  // goes (a TCX link, which the kernel removes when the process dies).
  Status attach(int ifindex);
  int program_fd() const;
  Result<FabricBalanceCounts> counts() const;
  // The flow hash the program set on the last RoCEv2 frame it saw on `cpu` (0 if none): how a
  // test run (bpf_prog_test_run on a pinned thread) reads the program's choice.
  Result<uint32_t> last_hash(int cpu) const;

 private:
  FabricBalancer() = default;
  fabric_balance* skel_ = nullptr;
  std::vector<TcLink> links_;
};

}  // namespace collide::injectors
