#include "injectors/fabric_balance.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>

#include "ebpf/fabric_balance.h"  // map layout shared with the program
#include "fabric_balance.skel.h"
#include "injectors/bpf_log.h"

namespace collide::injectors {
namespace {

uint32_t bpf_mode(Balancing mode) {
  switch (mode) {
    case Balancing::kQpHash: return FABRIC_BALANCE_QP_HASH;
    case Balancing::kSpray: return FABRIC_BALANCE_SPRAY;
    case Balancing::kEcmp: break;
  }
  return FABRIC_BALANCE_ECMP;
}

}  // namespace

Result<std::unique_ptr<FabricBalancer>> FabricBalancer::load(Balancing mode, uint64_t seed) {
  route_bpf_library_logs();
  std::unique_ptr<FabricBalancer> b(new FabricBalancer());
  b->skel_ = fabric_balance__open_and_load();
  if (b->skel_ == nullptr) return errno_status(errno, "loading the fabric balancing BPF program");
  COLLIDE_RETURN_IF_ERROR(b->set_mode(mode, seed));
  return b;
}

FabricBalancer::~FabricBalancer() {
  links_.clear();  // detach before the program goes
  fabric_balance__destroy(skel_);
}

Status FabricBalancer::set_mode(Balancing mode, uint64_t seed) {
  const uint32_t key = 0;
  fabric_balance_config config{};
  config.mode = bpf_mode(mode);
  config.seed = seed;
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.config), &key, &config, BPF_ANY) != 0) {
    return errno_status(errno, "setting the fabric balancing mode");
  }
  return {};
}

Status FabricBalancer::attach(int ifindex) {
  auto link = TcLink::attach(program_fd(), ifindex, Direction::kIngress);
  if (!link.ok()) return link.status();
  links_.push_back(std::move(link).value());
  return {};
}

int FabricBalancer::program_fd() const { return bpf_program__fd(skel_->progs.fabric_balance); }

namespace {

// One value per possible CPU.
Result<std::vector<fabric_balance_counters>> per_cpu_counters(const fabric_balance* skel) {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return errno_status(-cpus, "counting possible CPUs");
  std::vector<fabric_balance_counters> values(static_cast<size_t>(cpus));
  const uint32_t key = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &key, values.data()) != 0) {
    return errno_status(errno, "reading the fabric balancing counters");
  }
  return values;
}

}  // namespace

Result<uint32_t> FabricBalancer::last_hash(int cpu) const {
  auto values = per_cpu_counters(skel_);
  if (!values.ok()) return values.status();
  if (cpu < 0 || static_cast<size_t>(cpu) >= values->size()) {
    return invalid_argument("no such CPU");
  }
  return (*values)[static_cast<size_t>(cpu)].last_hash;
}

Result<FabricBalanceCounts> FabricBalancer::counts() const {
  auto values = per_cpu_counters(skel_);
  if (!values.ok()) return values.status();
  FabricBalanceCounts sum;
  for (const fabric_balance_counters& v : *values) {
    sum.rehashed += v.rehashed;
    sum.passed += v.passed;
  }
  return sum;
}

}  // namespace collide::injectors
