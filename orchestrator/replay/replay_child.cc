#include "orchestrator/replay/replay_child.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>
#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "common/process.h"
#include "orchestrator/replay/replay_session.h"


namespace collide::orchestrator::replay {
namespace {

using namespace std::chrono_literals;

// A SIGTERM or SIGINT stops the run as a stop message would (the ops that finished are kept).
std::atomic<bool> g_signalled{false};
void on_stop_signal(int) { g_signalled.store(true); }

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

v1::ReplayEvent failed_event(const std::string& message) {
  v1::ReplayEvent e;
  e.mutable_error()->set_message(message);
  return e;
}

}  // namespace

int serve_replay_child(int fd) {
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
  FramedStream stream(fd);
  // The request comes first; the agent sends it right after starting this process.
  auto first = stream.receive<v1::ReplayCommand>(60s);
  if (!first.ok() || !first->has_value() || !(*first)->has_request()) {
    (void)stream.send(failed_event(first.ok() ? "the first message was not a ReplayRequest"
                                              : first.status().message()));
    return 2;
  }
  const v1::ReplayRequest request = (*first)->request();
  auto session = ReplaySession::prepare(request);
  if (!session.ok()) {
    (void)stream.send(failed_event(session.status().message()));
    return 2;
  }
  v1::ReplayEvent ready;
  *ready.mutable_ready() = (*session)->ready();
  if (!stream.send(ready).ok()) return 2;

  // Wait for the go; a stop (or the agent going away) before it ends the replay unplayed.
  bool stopped = false;
  while (true) {
    auto command = stream.receive<v1::ReplayCommand>(100ms);
    if (!command.ok()) return 1;
    if (g_signalled.load()) stopped = true;
    if (command->has_value() && (*command)->has_stop()) stopped = true;
    if (stopped || (command->has_value() && (*command)->has_go())) break;
  }
  SessionOutcome outcome;
  if (stopped) {
    outcome.stopped = true;
    outcome.status = unavailable("stopped before the go");
  } else {
    RunCallbacks callbacks;
    callbacks.on_progress = [&](const v1::RunProgress& p) {
      v1::ReplayEvent e;
      *e.mutable_progress() = p;
      (void)stream.send(e);
    };
    callbacks.should_stop = [&] {
      if (g_signalled.load()) return true;
      auto command = stream.receive<v1::ReplayCommand>(0ms);
      // The agent gone is a stop too: nobody would read what this run records.
      return !command.ok() || (command->has_value() && (*command)->has_stop());
    };
    outcome = (*session)->run(callbacks);
  }
  v1::ReplayEvent done;
  *done.mutable_completion() = completion_of(outcome, request.run_index());
  if (!stream.send(done).ok()) return 1;
  return outcome.status.ok() ? 0 : 1;
}

Result<ReplayChild> ReplayChild::spawn(const std::vector<std::string>& argv) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return errno_status(errno, "socketpair for the replay child");
  }
  // The child keeps its end as fd 3, and nothing else of ours. Its stdout is not a channel:
  // whatever a library prints there joins its log on stderr.
  auto pid = process::spawn_with_descriptors(argv, {{fds[1], kChildFd}, {STDERR_FILENO, STDOUT_FILENO}});
  ::close(fds[1]);
  if (!pid.ok()) {
    ::close(fds[0]);
    return pid.status();
  }
  return ReplayChild(*pid, fds[0]);
}

ReplayChild::ReplayChild(ReplayChild&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      fd_(std::exchange(other.fd_, -1)),
      stream_(fd_),
      reaped_(other.reaped_),
      exit_code_(other.exit_code_) {}

ReplayChild::~ReplayChild() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (fd_ >= 0) ::close(fd_);
}

Result<int> ReplayChild::wait(std::chrono::milliseconds timeout) {
  if (reaped_) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    const pid_t rc = ::waitpid(pid_, &status, WNOHANG);
    if (rc == pid_) break;
    if (rc < 0 && errno != EINTR) return errno_status(errno, "waitpid");
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      reaped_ = true;
      exit_code_ = decode_wait_status(status);
      return deadline_exceeded("the replay child did not exit in time; killed");
    }
    std::this_thread::sleep_for(10ms);
  }
  reaped_ = true;
  exit_code_ = decode_wait_status(status);
  return exit_code_;
}

}  // namespace collide::orchestrator::replay
