// The parts of the fault injector's interface that need no BPF: built with or without eBPF, so
// callers that only read the clock or name a direction work in every build.
#include <time.h>

#include "injectors/fault_injector.h"
#include "injectors/tc_link.h"

namespace collide::injectors {

const char* direction_name(Direction direction) {
  return direction == Direction::kIngress ? "ingress" : "egress";
}

uint64_t FaultInjector::monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // the clock bpf_ktime_get_ns() reads
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace collide::injectors
