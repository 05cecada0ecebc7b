#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "injectors/undo_step.h"

// Faults must never outlive the run that injected them. Before collide changes a link or adds a
// qdisc it registers how to undo that change with a Guardian: a forked child process that holds
// every pending undo and watches a pipe from its parent. When the pipe reaches end of file (the
// parent exited or was killed, even by SIGKILL) the guardian performs every undo it still holds,
// newest first, and exits. On a clean stop the parent undoes the change itself and tells the
// guardian to forget it.
//
// Each pending undo is also written to a state directory (default /run/collide) under the owner's
// pid and start time, so that a start-up sweep can finish the job if the guardian itself died.
// Undos are data (injectors/undo_step.h), never commands: what runs is built by collide.
namespace collide::injectors {

// How to put one change back: steps performed in order, each failure tolerated, so an undo can
// run when the change was only half made, or made twice.
struct UndoAction {
  std::string description;  // for people: "veth0 in netns a: tbf 200 Mbit/s egress"
  std::string netns;        // where the change lives ("" = the host's namespace)
  std::vector<std::string> devices;  // devices the change touches (a sweep leaves them alone
                                     // while the owner lives)
  std::vector<UndoStep> steps;
};

// argv of an iproute2 tool ("ip", "tc") acting in a namespace: {tool, "-n", netns, args...}, or
// {tool, args...} for the host's namespace.
std::vector<std::string> netns_command(const std::string& tool, const std::string& netns,
                                       std::vector<std::string> args);

// Serialised form shared by the pipe protocol and the state files (one JSON object). Decoding
// checks every step (decode_step) and refuses the command lists that earlier versions wrote.
std::string encode_undo(const UndoAction& action);
Result<UndoAction> decode_undo(const std::string& text);

// Performs every step of an undo, in order; consecutive steps that `ip` performs run as one
// `ip -batch` (one process for a link's return, however many addresses, routes and neighbours it
// restores). Returns a message per step that failed (empty = all fine).
std::vector<std::string> perform_undo(const UndoAction& action);

// The default state directory: $COLLIDE_STATE_DIR when set, else /run/collide.
std::filesystem::path default_state_dir();

struct GuardianOptions {
  std::filesystem::path state_dir = default_state_dir();
};

// The directory in which a process with this pid and start time keeps its pending undos.
std::filesystem::path owner_state_dir(const std::filesystem::path& state_dir, int pid,
                                      uint64_t start_time);

// The file in an owner's directory that names its guardian ("<pid> <start time>"): while the
// guardian lives, the owner's undos are its to perform, even after the owner died.
inline constexpr const char* kGuardianFile = "guardian";

// Whether the process named by pid and start time is running (a zombie is not).
bool process_alive(int pid, uint64_t start_time);

// The start time of a process (field 22 of /proc/<pid>/stat, in clock ticks since boot), or
// nullopt if no such process exists. Together with the pid it names a process unambiguously.
std::optional<uint64_t> process_start_time(int pid);

class Guardian {
 public:
  // Forks the guardian. Create it early, before other threads start: a forked child of a
  // multi-threaded process inherits only the forking thread.
  static Result<std::unique_ptr<Guardian>> start(GuardianOptions options = {});
  // Undoes everything still registered, then lets the guardian go.
  ~Guardian();
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;

  // Hands the undo to the guardian (and the state directory) before the change is made. The
  // returned id names it for undo()/forget().
  Result<uint64_t> register_undo(const UndoAction& action);
  // Performs a registered undo now and forgets it. Failing commands are logged, not fatal.
  void undo(uint64_t id);
  // Forgets an undo without performing it (the change was reverted some other way).
  void forget(uint64_t id);
  // Performs every registered undo, newest first.
  void undo_all();

  int guardian_pid() const { return child_pid_; }
  const std::filesystem::path& owner_dir() const { return owner_dir_; }
  size_t pending() const;

 private:
  Guardian() = default;
  Status send(const std::string& line);

  mutable std::mutex mutex_;
  int child_pid_ = -1;
  int pipe_fd_ = -1;  // write end; its closing is the guardian's signal
  uint64_t next_id_ = 1;
  std::vector<std::pair<uint64_t, UndoAction>> pending_;
  std::filesystem::path owner_dir_;
};

}  // namespace collide::injectors
