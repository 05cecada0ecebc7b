#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.h"
#include "injectors/tc_link.h"

struct roce_drop;  // the libbpf skeleton

namespace collide::testing {

struct RoceDropCounts {
  uint64_t matched = 0;  // RoCEv2 data packets the program saw
  uint64_t dropped = 0;
};

// Seeded random loss of RoCEv2 data packets (tests/support/bpf/roce_drop.bpf.c) on one tc hook, with exact
// counts of what it saw and dropped: the simplest fault, and the ground truth for loss tests.
class RoceDrop {
 public:
  static Result<std::unique_ptr<RoceDrop>> load(double probability, uint64_t seed);
  ~RoceDrop();
  RoceDrop(const RoceDrop&) = delete;
  RoceDrop& operator=(const RoceDrop&) = delete;

  // On an interface of the calling thread's network namespace, until this object goes.
  Status attach(int ifindex, injectors::Direction direction);
  int program_fd() const;
  Result<RoceDropCounts> counts() const;

 private:
  RoceDrop() = default;
  roce_drop* skel_ = nullptr;
  std::vector<injectors::TcLink> links_;
};

}  // namespace collide::testing
