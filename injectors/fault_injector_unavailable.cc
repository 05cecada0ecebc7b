// The fault injector of a build without eBPF (-DCOLLIDE_WITH_EBPF=OFF): loading it, or attaching
// a tc program, fails with a message that says so, and the command that asked fails with it.
// No FaultInjector or TcLink can exist in such a build; their other members only have to link.
#include <string>
#include <utility>

#include "injectors/fault_injector.h"
#include "injectors/tc_link.h"

namespace collide::injectors {
namespace {

Status ebpf_unavailable(std::string_view what) {
  return unavailable(std::string(what) +
                     ": this build of collide is without eBPF (-DCOLLIDE_WITH_EBPF=OFF); rebuild "
                     "with -DCOLLIDE_WITH_EBPF=ON for per-packet faults and counters");
}

}  // namespace

Result<std::unique_ptr<FaultInjector>> FaultInjector::load(FaultInjectorOptions) {
  return ebpf_unavailable("loading the fault injector");
}
FaultInjector::~FaultInjector() = default;
Result<TcLink::Mode> FaultInjector::attach(int, Direction) {
  return ebpf_unavailable("attaching the fault injector");
}
Status FaultInjector::attach_xdp(int) { return ebpf_unavailable("attaching the fault injector"); }
Status FaultInjector::arm() { return ebpf_unavailable("arming the fault injector"); }
Status FaultInjector::disarm() { return ebpf_unavailable("disarming the fault injector"); }
Status FaultInjector::set_lease_expiry(uint64_t) {
  return ebpf_unavailable("setting the fault injector's lease");
}
int FaultInjector::program_fd(Direction) const { return -1; }
int FaultInjector::xdp_program_fd() const { return -1; }
Result<std::vector<FaultRuleCounters>> FaultInjector::counters() const {
  return ebpf_unavailable("reading fault counters");
}
Result<FaultStats> FaultInjector::stats() const { return ebpf_unavailable("reading fault stats"); }
Result<size_t> FaultInjector::drain_events(const std::function<void(const collide_fault_event&)>&) {
  return ebpf_unavailable("reading fault events");
}

Result<TcLink> TcLink::attach(int, int, Direction) {
  return ebpf_unavailable("attaching a tc program");
}
TcLink::TcLink(TcLink&& other) noexcept { *this = std::move(other); }
TcLink& TcLink::operator=(TcLink&& other) noexcept {
  mode_ = other.mode_;
  ifindex_ = other.ifindex_;
  direction_ = other.direction_;
  return *this;
}
TcLink::~TcLink() = default;
void TcLink::detach() {}

}  // namespace collide::injectors
