#pragma once

#include <cstdint>

#include "common/result.h"

namespace collide::injectors {

enum class Direction { kIngress, kEgress };

const char* direction_name(Direction direction);

// A tc BPF program attached to one interface in one direction, detached when this object goes.
// TCX links (kernel 6.6+) are preferred: the kernel removes them when the process dies, so a
// crashed collide leaves nothing behind. Older kernels get a clsact filter through libbpf, tagged
// with kCollideTcHandle so a start-up sweep can find leftovers.
class TcLink {
 public:
  enum class Mode { kTcx, kClsact };
  static constexpr uint32_t kCollideTcHandle = 0xc011de;

  static Result<TcLink> attach(int prog_fd, int ifindex, Direction direction);

  TcLink(TcLink&& other) noexcept;
  TcLink& operator=(TcLink&& other) noexcept;
  TcLink(const TcLink&) = delete;
  TcLink& operator=(const TcLink&) = delete;
  ~TcLink();

  Mode mode() const { return mode_; }
  int ifindex() const { return ifindex_; }
  Direction direction() const { return direction_; }
  void detach();

 private:
  TcLink() = default;

  Mode mode_ = Mode::kTcx;
  int ifindex_ = 0;
  Direction direction_ = Direction::kIngress;
  int link_fd_ = -1;           // TCX
  uint32_t tc_priority_ = 0;   // clsact: the priority the kernel assigned
  bool attached_ = false;
};

}  // namespace collide::injectors
