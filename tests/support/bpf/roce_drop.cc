#include "tests/support/bpf/roce_drop.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cmath>

#include <fmt/format.h>

#include "tests/support/bpf/roce_drop_maps.h"
#include "injectors/bpf_log.h"
#include "roce_drop.skel.h"

namespace collide::testing {

Result<std::unique_ptr<RoceDrop>> RoceDrop::load(double probability, uint64_t seed) {
  if (!(probability >= 0 && probability <= 1)) {
    return invalid_argument(fmt::format("drop probability {} is not within 0..1", probability));
  }
  injectors::route_bpf_library_logs();
  std::unique_ptr<RoceDrop> d(new RoceDrop());
  d->skel_ = roce_drop__open();
  if (d->skel_ == nullptr) return errno_status(errno, "opening the RoCE drop program");
  d->skel_->rodata->threshold = static_cast<uint64_t>(std::llround(std::ldexp(probability, 32)));
  d->skel_->rodata->seed = seed;
  if (int rc = roce_drop__load(d->skel_); rc != 0) {
    return errno_status(-rc, "loading the RoCE drop program");
  }
  return d;
}

RoceDrop::~RoceDrop() {
  links_.clear();
  roce_drop__destroy(skel_);
}

Status RoceDrop::attach(int ifindex, injectors::Direction direction) {
  auto link = injectors::TcLink::attach(program_fd(), ifindex, direction);
  if (!link.ok()) return link.status();
  links_.push_back(std::move(link).value());
  return {};
}

int RoceDrop::program_fd() const { return bpf_program__fd(skel_->progs.roce_drop); }

Result<RoceDropCounts> RoceDrop::counts() const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return errno_status(-cpus, "counting possible CPUs");
  std::vector<roce_drop_counters> per_cpu(static_cast<size_t>(cpus));
  const uint32_t key = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.counters), &key, per_cpu.data()) != 0) {
    return errno_status(errno, "reading RoCE drop counters");
  }
  RoceDropCounts total;
  for (const auto& c : per_cpu) {
    total.matched += c.matched;
    total.dropped += c.dropped;
  }
  return total;
}

}  // namespace collide::testing
