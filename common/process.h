#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/result.h"

// Running other programs (iproute2, ethtool, tc, tshark) without a shell: argv in, exit code and
// output back, or a child whose output is read line by line.
namespace collide::process {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Starts a program (no shell) with some of our descriptors placed at given numbers in it
// ({ours, its}: e.g. {pipe_end, STDOUT_FILENO}); nothing else of ours is inherited where our
// descriptors are close-on-exec. Returns its pid; reaping it is the caller's job.
Result<int> spawn_with_descriptors(const std::vector<std::string>& argv,
                                   const std::vector<std::pair<int, int>>& placed);

// Runs a program (no shell) to completion and captures what it prints.
Result<CommandResult> run_command(const std::vector<std::string>& argv);
// The same with `input` as its standard input (`ip -batch -`).
Result<CommandResult> run_command(const std::vector<std::string>& argv, const std::string& input);

// Runs a program and turns a non-zero exit into an error that quotes the command and its output.
Status run_checked(const std::vector<std::string>& argv);
// The same with `input` as its standard input.
Status run_checked(const std::vector<std::string>& argv, const std::string& input);

// A child process whose stdout is read line by line; killed and reaped on destruction.
class ChildProcess {
 public:
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ~ChildProcess();

  // The next line of stdout, without its newline; an error at end of output or timeout.
  Result<std::string> read_line(std::chrono::milliseconds timeout);
  // Waits for exit; returns the exit code (128 + signal when killed). Kills it after `timeout`.
  Result<int> wait(std::chrono::milliseconds timeout);
  // Everything printed to stdout after the lines already read (call after wait).
  std::string remaining_output();
  int pid() const { return pid_; }

 private:
  ChildProcess() = default;
  bool fill(std::chrono::milliseconds timeout);

  int pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  bool exited_ = false;
  int exit_code_ = -1;
};

}  // namespace collide::process
