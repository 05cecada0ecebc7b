#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <utility>

#include <boost/algorithm/string/trim.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

extern char** environ;

namespace collide::process {
namespace {

// Starts argv with stdout (and, if asked, stderr) going to a new pipe; returns (pid, read end).
// `stdin_fd`, when not -1, becomes its standard input.
Result<std::pair<int, int>> spawn_with_pipe(const std::vector<std::string>& argv,
                                            bool merge_stderr, int stdin_fd = -1) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return errno_status(errno, "pipe");
  std::vector<std::pair<int, int>> placed = {{pipe_fds[1], STDOUT_FILENO}};
  if (merge_stderr) placed.emplace_back(pipe_fds[1], STDERR_FILENO);
  if (stdin_fd != -1) placed.emplace_back(stdin_fd, STDIN_FILENO);
  auto pid = spawn_with_descriptors(argv, placed);
  close(pipe_fds[1]);
  if (!pid.ok()) {
    close(pipe_fds[0]);
    return pid.status();
  }
  return std::make_pair(*pid, pipe_fds[0]);
}

}  // namespace

Result<int> spawn_with_descriptors(const std::vector<std::string>& argv,
                                   const std::vector<std::pair<int, int>>& placed) {
  if (argv.empty()) return invalid_argument("no program to start");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the copy: the child keeps exactly these.
  for (const auto& [ours, its] : placed) posix_spawn_file_actions_adddup2(&actions, ours, its);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return errno_status(rc, fmt::format("starting {}", argv[0]));
  return static_cast<int>(pid);
}

namespace {

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

Result<CommandResult> run_to_completion(const std::vector<std::string>& argv, int stdin_fd) {
  auto spawned = spawn_with_pipe(argv, /*merge_stderr=*/true, stdin_fd);
  if (!spawned.ok()) return spawned.status();
  auto [pid, fd] = *spawned;
  CommandResult result;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) result.output.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = decode_wait_status(status);
  return result;
}

}  // namespace

Result<CommandResult> run_command(const std::vector<std::string>& argv) {
  return run_to_completion(argv, -1);
}

Result<CommandResult> run_command(const std::vector<std::string>& argv, const std::string& input) {
  // A file in memory rather than a pipe: written whole before the child starts, it can never
  // block us while the child blocks on its output.
  const int fd = memfd_create("collide-stdin", MFD_CLOEXEC);
  if (fd < 0) return errno_status(errno, "memfd_create");
  size_t written = 0;
  while (written < input.size()) {
    const ssize_t n = write(fd, input.data() + written, input.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(fd);
      return errno_status(error, "writing a program's input");
    }
    written += static_cast<size_t>(n);
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    const int error = errno;
    close(fd);
    return errno_status(error, "lseek");
  }
  auto result = run_to_completion(argv, fd);
  close(fd);
  return result;
}

namespace {

// A run's outcome as run_checked reports it: its error, or a non-zero exit quoting the command
// and what it printed (without the output's last newline, so the message reads as one sentence).
Status checked(const std::vector<std::string>& argv, const Result<CommandResult>& result) {
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return internal_error(fmt::format("`{}` exited with {}: {}", fmt::join(argv, " "),
                                      result->exit_code, boost::algorithm::trim_right_copy(result->output)));
  }
  return {};
}

}  // namespace

Status run_checked(const std::vector<std::string>& argv) {
  return checked(argv, run_command(argv));
}

Status run_checked(const std::vector<std::string>& argv, const std::string& input) {
  return checked(argv, run_command(argv, input));
}

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv) {
  auto spawned = spawn_with_pipe(argv, /*merge_stderr=*/false);
  if (!spawned.ok()) return spawned.status();
  ChildProcess child;
  child.pid_ = spawned->first;
  child.stdout_fd_ = spawned->second;
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)),
      buffer_(std::move(other.buffer_)),
      exited_(other.exited_),
      exit_code_(other.exit_code_) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

bool ChildProcess::fill(std::chrono::milliseconds timeout) {
  pollfd pfd{stdout_fd_, POLLIN, 0};
  if (poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char buf[4096];
  const ssize_t n = read(stdout_fd_, buf, sizeof(buf));
  if (n <= 0) return false;
  buffer_.append(buf, static_cast<size_t>(n));
  return true;
}

Result<std::string> ChildProcess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    // Rounded up: rounding down made a wait under 1 ms read nothing, and a poll that timed out
    // before the deadline look like a closed pipe.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return deadline_exceeded("no line from child process in time");
    if (!fill(left)) {
      if (std::chrono::steady_clock::now() < deadline) {
        return data_loss(fmt::format("child process closed its output; unread: '{}'", buffer_));
      }
      return deadline_exceeded("no line from child process in time");
    }
  }
}

Result<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (exited_) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    const pid_t rc = waitpid(pid_, &status, WNOHANG);
    if (rc == pid_) break;
    if (rc < 0 && errno != EINTR) return errno_status(errno, "waitpid");
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      exited_ = true;
      exit_code_ = decode_wait_status(status);
      return deadline_exceeded("child process did not exit in time; killed");
    }
    // Drain stdout meanwhile so a chatty child never blocks on a full pipe.
    fill(std::chrono::milliseconds(20));
  }
  exited_ = true;
  exit_code_ = decode_wait_status(status);
  return exit_code_;
}

std::string ChildProcess::remaining_output() {
  while (fill(std::chrono::milliseconds(0))) {
  }
  return std::exchange(buffer_, {});
}

}  // namespace collide::process
