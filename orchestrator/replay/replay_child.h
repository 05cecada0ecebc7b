#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "collide/replay.pb.h"
#include "common/result.h"
#include "orchestrator/replay/framed_stream.h"

// The agent's replay child and the protocol both ends speak (collide/replay.proto): the agent
// starts `collide replay-child` with one end of a socket pair as the child's fd 3, sends it a
// ReplayRequest, and later a go and maybe a stop; the child answers ready, progress and, last,
// its completion.
namespace collide::orchestrator::replay {

// The fd the child finds its end of the socket pair on.
inline constexpr int kChildFd = 3;

// The child's side: serves one replay over `fd` and returns the process's exit code (0 when the
// job completed, 1 when it failed or was stopped, 2 when the request was refused).
int serve_replay_child(int fd);

// The agent's side: a child process and its end of the socket pair. Destroying it kills the child.
class ReplayChild {
 public:
  // Starts `argv` (the child command, e.g. {collide, "replay-child"}) with the socket pair's
  // other end as fd 3. The child dies with the thread that started it.
  static Result<ReplayChild> spawn(const std::vector<std::string>& argv);
  ReplayChild(ReplayChild&& other) noexcept;
  ReplayChild& operator=(ReplayChild&&) = delete;
  ~ReplayChild();

  Status send(const v1::ReplayCommand& command) { return stream_.send(command); }
  // The child's next event; nullopt when none within `timeout`; an error once it closed its end.
  Result<std::optional<v1::ReplayEvent>> receive(std::chrono::milliseconds timeout) {
    return stream_.receive<v1::ReplayEvent>(timeout);
  }
  // Waits for the child's exit; its code (128 + signal when killed). Kills it after `timeout`.
  Result<int> wait(std::chrono::milliseconds timeout);
  int pid() const { return pid_; }

 private:
  ReplayChild(int pid, int fd) : pid_(pid), fd_(fd), stream_(fd) {}

  int pid_ = -1;
  int fd_ = -1;
  FramedStream stream_;
  bool reaped_ = false;
  int exit_code_ = -1;
};

}  // namespace collide::orchestrator::replay
