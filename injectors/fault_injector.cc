#include "injectors/fault_injector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "common/logging.h"
#include "fault.skel.h"
#include "injectors/bpf_log.h"

namespace collide::injectors {
namespace {

constexpr uint32_t kZero = 0;

}  // namespace

Result<std::unique_ptr<FaultInjector>> FaultInjector::load(FaultInjectorOptions options) {
  if (options.rules.size() > COLLIDE_FAULT_MAX_RULES) {
    return invalid_argument(fmt::format("{} rules given; the injector holds at most {}",
                                        options.rules.size(), COLLIDE_FAULT_MAX_RULES));
  }
  for (const FaultRule& rule : options.rules) COLLIDE_RETURN_IF_ERROR(validate_rule(rule));
  if (options.lease.count() <= 0) return invalid_argument("the lease must be longer than zero");
  auto allow = encode_allowlist(options.allow);
  if (!allow.ok()) return allow.status();

  route_bpf_library_logs();
  std::unique_ptr<FaultInjector> f(new FaultInjector());
  f->rules_ = in_priority_order(options.rules);
  f->options_ = std::move(options);
  f->skel_ = fault__open();
  if (f->skel_ == nullptr) return errno_status(errno, "opening the fault injector program");
  if (int rc = fault__load(f->skel_); rc != 0) {
    return errno_status(-rc, "loading the fault injector program");
  }
  // Lease 0: inert until armed.
  COLLIDE_RETURN_IF_ERROR(f->set_lease_expiry(0));
  COLLIDE_RETURN_IF_ERROR(f->write_psn_lists());
  COLLIDE_RETURN_IF_ERROR(f->write_config());
  if (f->options_.events) {
    f->ring_ = ring_buffer__new(
        bpf_map__fd(f->skel_->maps.events),
        [](void* ctx, void* data, size_t size) -> int {
          auto* self = static_cast<FaultInjector*>(ctx);
          if (size >= sizeof(collide_fault_event) && self->sink_) {
            self->sink_(*static_cast<const collide_fault_event*>(data));
          }
          return 0;
        },
        f.get(), nullptr);
    if (f->ring_ == nullptr) return errno_status(errno, "opening the fault event ring");
  }
  return f;
}

FaultInjector::~FaultInjector() {
  stop_renewal();
  links_.clear();
  for (bpf_link* link : xdp_links_) bpf_link__destroy(link);
  if (ring_ != nullptr) ring_buffer__free(ring_);
  fault__destroy(skel_);
}

Status FaultInjector::write_config() {
  collide_fault_config cfg{};
  cfg.rule_count = static_cast<uint32_t>(rules_.size());
  cfg.events = options_.events ? 1 : 0;
  auto allow = encode_allowlist(options_.allow);
  if (!allow.ok()) return allow.status();
  cfg.allow = *allow;
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.config), &kZero, &cfg, BPF_ANY) != 0) {
    return errno_status(errno, "writing the fault injector config");
  }
  return {};
}

Status FaultInjector::write_psn_lists() {
  const int fd = bpf_map__fd(skel_->maps.psn_list);
  const uint8_t present = 1;
  size_t total = 0;
  for (uint32_t slot = 0; slot < rules_.size(); ++slot) {
    if (rules_[slot].decider != Decider::kPsnList) continue;
    for (uint32_t psn : rules_[slot].psns) {
      if (++total > 65536) return invalid_argument("more than 65536 listed PSNs over all rules");
      collide_fault_psn_key key{slot, psn};
      if (bpf_map_update_elem(fd, &key, &present, BPF_ANY) != 0) {
        return errno_status(errno, "writing the PSN list");
      }
    }
  }
  return {};
}

Result<TcLink::Mode> FaultInjector::attach(int ifindex, Direction direction) {
  auto link = TcLink::attach(program_fd(direction), ifindex, direction);
  if (!link.ok()) return link.status();
  const TcLink::Mode mode = link->mode();
  links_.push_back(std::move(link).value());
  return mode;
}

Status FaultInjector::attach_xdp(int ifindex) {
  for (const FaultRule& rule : rules_) {
    if (rule.action == Action::kDuplicate) {
      return invalid_argument(fmt::format(
          "rule {} duplicates packets, which XDP cannot do; attach it on tc instead", rule.id));
    }
  }
  // A link, not a netlink attachment: no fd left open means no program left on the device.
  bpf_link* link = bpf_program__attach_xdp(skel_->progs.fault_xdp, ifindex);
  if (link == nullptr) {
    return errno_status(errno, fmt::format("attaching the fault program to XDP of ifindex {}",
                                           ifindex));
  }
  xdp_links_.push_back(link);
  return {};
}

int FaultInjector::xdp_program_fd() const { return bpf_program__fd(skel_->progs.fault_xdp); }

int FaultInjector::program_fd(Direction direction) const {
  return bpf_program__fd(direction == Direction::kIngress ? skel_->progs.fault_ingress
                                                          : skel_->progs.fault_egress);
}

Status FaultInjector::set_lease_expiry(uint64_t expiry_ns) {
  const collide_fault_lease l{expiry_ns};
  if (bpf_map_update_elem(bpf_map__fd(skel_->maps.lease), &kZero, &l, BPF_ANY) != 0) {
    return errno_status(errno, "writing the fault lease");
  }
  return {};
}

Status FaultInjector::arm() {
  stop_renewal();
  const uint64_t now = monotonic_ns();
  armed_at_ns_ = now;
  const int fd = bpf_map__fd(skel_->maps.rules);
  for (uint32_t slot = 0; slot < rules_.size(); ++slot) {
    const collide_fault_rule r = encode_rule(rules_[slot], now);
    if (bpf_map_update_elem(fd, &slot, &r, BPF_ANY) != 0) {
      return errno_status(errno, fmt::format("writing fault rule {}", rules_[slot].id));
    }
  }
  const auto lease_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.lease).count());
  COLLIDE_RETURN_IF_ERROR(set_lease_expiry(now + lease_ns));
  if (options_.renew_lease) {
    std::lock_guard lock(mutex_);
    stopping_ = false;
    renewer_ = std::thread([this] { renew_loop(); });
  }
  return {};
}

Status FaultInjector::disarm() {
  stop_renewal();
  return set_lease_expiry(0);
}

void FaultInjector::renew_loop() {
  const auto period = options_.lease / 3;
  const auto lease_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.lease).count());
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    if (auto s = set_lease_expiry(monotonic_ns() + lease_ns); !s.ok()) {
      // Left alone, the lease lapses and the faults go inert: the safe way to fail.
      logging::get("bpf")->warn("renewing the fault lease: {}", s.to_string());
    }
  }
}

void FaultInjector::stop_renewal() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (renewer_.joinable()) renewer_.join();
}

Result<std::vector<FaultRuleCounters>> FaultInjector::counters() const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return errno_status(-cpus, "counting possible CPUs");
  std::vector<collide_fault_counters> per_cpu(static_cast<size_t>(cpus));
  std::vector<FaultRuleCounters> out;
  const int fd = bpf_map__fd(skel_->maps.counters);
  for (uint32_t slot = 0; slot < rules_.size(); ++slot) {
    if (bpf_map_lookup_elem(fd, &slot, per_cpu.data()) != 0) {
      return errno_status(errno, "reading fault counters");
    }
    FaultRuleCounters total;
    total.id = rules_[slot].id;
    for (const auto& c : per_cpu) {
      total.matched += c.matched;
      total.acted += c.acted;
      total.bytes_acted += c.bytes_acted;
      if (c.first_ns != 0 && (total.first_ns == 0 || c.first_ns < total.first_ns)) {
        total.first_ns = c.first_ns;
      }
      total.last_ns = std::max<uint64_t>(total.last_ns, c.last_ns);
    }
    out.push_back(total);
  }
  return out;
}

Result<FaultStats> FaultInjector::stats() const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return errno_status(-cpus, "counting possible CPUs");
  std::vector<collide_fault_stats> per_cpu(static_cast<size_t>(cpus));
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.stats), &kZero, per_cpu.data()) != 0) {
    return errno_status(errno, "reading fault injector statistics");
  }
  FaultStats total;
  for (const auto& s : per_cpu) {
    total.packets += s.packets;
    total.allowed += s.allowed;
    total.inert += s.inert;
    total.events_lost += s.events_lost;
  }
  return total;
}

Result<size_t> FaultInjector::drain_events(
    const std::function<void(const collide_fault_event&)>& sink) {
  if (ring_ == nullptr) return failed_precondition("the injector was loaded without events");
  sink_ = sink;
  const int n = ring_buffer__consume(ring_);
  sink_ = nullptr;
  if (n < 0) return errno_status(-n, "reading the fault event ring");
  return static_cast<size_t>(n);
}

}  // namespace collide::injectors
