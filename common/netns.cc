#include "common/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace collide::netns {

Status enter(const std::string& name) {
  const std::string path = "/run/netns/" + name;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, fmt::format("opening network namespace {}", path));
  const int rc = setns(fd, CLONE_NEWNET);
  const int err = errno;
  close(fd);
  if (rc != 0) return errno_status(err, fmt::format("entering network namespace {}", name));
  return {};
}

Result<std::unique_ptr<Scope>> Scope::enter(const std::string& name) {
  std::unique_ptr<Scope> scope(new Scope());
  scope->original_fd_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (scope->original_fd_ < 0) return errno_status(errno, "opening the current network namespace");
  COLLIDE_RETURN_IF_ERROR(netns::enter(name));
  return scope;
}

Scope::~Scope() {
  if (original_fd_ < 0) return;
  setns(original_fd_, CLONE_NEWNET);
  close(original_fd_);
}

}  // namespace collide::netns
