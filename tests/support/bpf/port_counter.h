#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.h"
#include "injectors/tc_link.h"

struct port_counter;  // the libbpf skeleton

namespace collide::testing {

struct PortCountKey {
  uint32_t ifindex = 0;
  injectors::Direction direction = injectors::Direction::kIngress;
  uint8_t ip_proto = 0;   // 0: not IP
  uint16_t dst_port = 0;  // 0: no UDP/TCP header
};

struct PortCount {
  PortCountKey key;
  uint64_t packets = 0;
  uint64_t bytes = 0;
};

// The packet/byte counter program (tests/support/bpf/port_counter.bpf.c): loaded once, attached to any number
// of (interface, direction) hooks, read back summed over CPUs. Counts are exact: the program sees
// every frame that passes its hook and never changes a frame's fate.
class PortCounter {
 public:
  static Result<std::unique_ptr<PortCounter>> load();
  ~PortCounter();
  PortCounter(const PortCounter&) = delete;
  PortCounter& operator=(const PortCounter&) = delete;

  // Attaches on an interface of the calling thread's network namespace; stays until destruction.
  Result<injectors::TcLink::Mode> attach(int ifindex, injectors::Direction direction);

  int program_fd(injectors::Direction direction) const;

  // Every counter in the map.
  Result<std::vector<PortCount>> read_all() const;
  // One counter; zero counts where the program never saw such a packet.
  Result<PortCount> read(const PortCountKey& key) const;

 private:
  PortCounter() = default;

  port_counter* skel_ = nullptr;
  std::vector<injectors::TcLink> links_;
};

}  // namespace collide::testing
