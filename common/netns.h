#pragma once

#include <memory>
#include <string>

#include "common/result.h"

// Network namespaces by their `ip netns` name (/run/netns/<name>).
namespace collide::netns {

// Moves the calling thread into the namespace for good. Call it before any other thread starts
// (e.g. before DPDK's EAL), so that every thread created afterwards lives there too.
Status enter(const std::string& name);

// Enters a namespace on the calling thread for the lifetime of the object, then returns. Sockets
// and BPF links made meanwhile stay in (or attached to) the namespace.
class Scope {
 public:
  static Result<std::unique_ptr<Scope>> enter(const std::string& name);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Scope() = default;
  int original_fd_ = -1;
};

}  // namespace collide::netns
