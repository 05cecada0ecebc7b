// The fabric balancer of a build without eBPF (-DCOLLIDE_WITH_EBPF=OFF): a scenario that asks for
// qp-hash or spray balancing fails with a message that says so. No FabricBalancer can exist in
// such a build; its other members only have to link.
#include "injectors/fabric_balance.h"

namespace collide::injectors {

Result<std::unique_ptr<FabricBalancer>> FabricBalancer::load(Balancing, uint64_t) {
  return unavailable(
      "load balancing qp-hash or spray: this build of collide is without eBPF "
      "(-DCOLLIDE_WITH_EBPF=OFF); rebuild with -DCOLLIDE_WITH_EBPF=ON, or use load_balancing: ecmp");
}
FabricBalancer::~FabricBalancer() = default;
Status FabricBalancer::set_mode(Balancing, uint64_t) { return load(Balancing::kEcmp, 0).status(); }
Status FabricBalancer::attach(int) { return load(Balancing::kEcmp, 0).status(); }
int FabricBalancer::program_fd() const { return -1; }
Result<FabricBalanceCounts> FabricBalancer::counts() const {
  return load(Balancing::kEcmp, 0).status();
}
Result<uint32_t> FabricBalancer::last_hash(int) const { return load(Balancing::kEcmp, 0).status(); }

}  // namespace collide::injectors
