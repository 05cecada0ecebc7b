#include "tests/support/bpf/port_counter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>

#include <fmt/format.h>

#include "injectors/bpf_log.h"
#include "tests/support/bpf/port_counter_maps.h"  // map layout shared with the program
#include "port_counter.skel.h"

namespace collide::testing {
namespace {

port_counter_key to_bpf_key(const PortCountKey& key) {
  port_counter_key k{};
  k.ifindex = key.ifindex;
  k.direction = key.direction == injectors::Direction::kIngress ? COLLIDE_DIR_INGRESS : COLLIDE_DIR_EGRESS;
  k.ip_proto = key.ip_proto;
  k.dst_port = key.dst_port;
  return k;
}

PortCountKey from_bpf_key(const port_counter_key& k) {
  return PortCountKey{k.ifindex,
                      k.direction == COLLIDE_DIR_INGRESS ? injectors::Direction::kIngress : injectors::Direction::kEgress,
                      k.ip_proto, k.dst_port};
}

// Sums one per-CPU value array; the map holds one value per possible CPU.
Result<PortCount> lookup_sum(int map_fd, const port_counter_key& key) {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return errno_status(-cpus, "counting possible CPUs");
  std::vector<port_counter_value> values(static_cast<size_t>(cpus));
  PortCount count{from_bpf_key(key), 0, 0};
  if (bpf_map_lookup_elem(map_fd, &key, values.data()) != 0) {
    if (errno == ENOENT) return count;
    return errno_status(errno, "reading port counter");
  }
  for (const port_counter_value& v : values) {
    count.packets += v.packets;
    count.bytes += v.bytes;
  }
  return count;
}

}  // namespace

Result<std::unique_ptr<PortCounter>> PortCounter::load() {
  injectors::route_bpf_library_logs();
  std::unique_ptr<PortCounter> counter(new PortCounter());
  counter->skel_ = port_counter__open_and_load();
  if (counter->skel_ == nullptr) {
    return errno_status(errno, "loading the port counter BPF program");
  }
  return counter;
}

PortCounter::~PortCounter() {
  links_.clear();  // detach before the programs go
  port_counter__destroy(skel_);
}

Result<injectors::TcLink::Mode> PortCounter::attach(int ifindex, injectors::Direction direction) {
  auto link = injectors::TcLink::attach(program_fd(direction), ifindex, direction);
  if (!link.ok()) return link.status();
  const injectors::TcLink::Mode mode = link->mode();
  links_.push_back(std::move(link).value());
  return mode;
}

int PortCounter::program_fd(injectors::Direction direction) const {
  return bpf_program__fd(direction == injectors::Direction::kIngress ? skel_->progs.count_ingress
                                                          : skel_->progs.count_egress);
}

Result<std::vector<PortCount>> PortCounter::read_all() const {
  const int map_fd = bpf_map__fd(skel_->maps.port_counters);
  std::vector<PortCount> counts;
  port_counter_key key{};
  port_counter_key next{};
  const void* previous = nullptr;  // nullptr asks for the first key
  while (bpf_map_get_next_key(map_fd, previous, &next) == 0) {
    auto count = lookup_sum(map_fd, next);
    if (!count.ok()) return count.status();
    counts.push_back(*count);
    key = next;
    previous = &key;
  }
  if (errno != ENOENT) return errno_status(errno, "iterating port counters");
  return counts;
}

Result<PortCount> PortCounter::read(const PortCountKey& key) const {
  return lookup_sum(bpf_map__fd(skel_->maps.port_counters), to_bpf_key(key));
}

}  // namespace collide::testing
