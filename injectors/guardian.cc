#include "injectors/guardian.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/parse_number.h"
#include "common/process.h"
#include "injectors/state_file.h"
#include "injectors/xdp_record.h"

namespace collide::injectors {
namespace {

namespace fs = std::filesystem;

// The guardian's reasons to stop waiting, set from signal handlers.
volatile sig_atomic_t g_terminate = 0;
volatile sig_atomic_t g_parent_signal = 0;

void on_terminate(int) { g_terminate = 1; }
void on_parent_death(int) { g_parent_signal = 1; }

// The version of the undo record: steps as data. Earlier records held commands.
constexpr int kUndoFormat = 2;

// Text from a record, safe to print: no control characters, bounded.
std::string printable(std::string text) {
  if (text.size() > 200) text.resize(200);
  for (char& c : text) {
    if (c < ' ' || c == 0x7f) c = '?';
  }
  return text;
}

fs::path state_file(const fs::path& owner_dir, uint64_t id) {
  return owner_dir / fmt::format("{}.json", id);
}

void remove_quietly(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

// The body of the forked guardian. Never returns.
[[noreturn]] void guardian_main(int read_fd, pid_t parent, const fs::path& owner_dir,
                                sigset_t mask) {
  // A Ctrl-C on the terminal goes to the foreground process group; leaving it means the parent
  // can be interrupted while the guardian survives to clean up after it.
  setpgid(0, 0);
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  sigaction(SIGPIPE, &sa, nullptr);
  sa.sa_handler = on_terminate;
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = on_parent_death;
  sigaction(SIGUSR1, &sa, nullptr);
  // A second alarm besides the pipe. It fires when the *thread* that forked us ends, so it is
  // only trusted once getppid() confirms the parent process is gone.
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE}) sigdelset(&mask, sig);
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);

  // Keep only the pipe and stderr: an inherited BPF link or socket descriptor held here would
  // keep the parent's attachments alive after the parent closed them.
  if (read_fd != 3) {
    dup2(read_fd, 3);
    read_fd = 3;
  }
  const int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    dup2(devnull, STDIN_FILENO);
    dup2(devnull, STDOUT_FILENO);
  }
  close_range(4, ~0U, 0);

  std::map<uint64_t, UndoAction> pending;
  std::string buffer;
  // Returns false at end of file (the parent closed the pipe or died) or on a read error.
  auto consume = [&]() {
    char chunk[4096];
    const ssize_t n = read(read_fd, chunk, sizeof(chunk));
    if (n < 0) return errno == EINTR;
    if (n == 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
    size_t newline;
    while ((newline = buffer.find('\n')) != std::string::npos) {
      const std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      std::istringstream in(line);
      char verb = 0;
      uint64_t id = 0;
      in >> verb >> id;
      if (verb == 'R') {
        std::string json;
        std::getline(in >> std::ws, json);
        if (auto action = decode_undo(json); action.ok()) pending[id] = std::move(*action);
      } else if (verb == 'F') {
        pending.erase(id);
      }
    }
    return true;
  };
  while (!g_terminate && getppid() == parent) {
    pollfd pfd{read_fd, POLLIN, 0};
    if (poll(&pfd, 1, 250) <= 0) continue;  // timeout or a signal: the loop condition decides
    if (!consume()) break;
  }
  // Whatever the parent registered before it went is still in the pipe: read it all.
  fcntl(read_fd, F_SETFL, fcntl(read_fd, F_GETFL) | O_NONBLOCK);
  while (consume()) {
  }

  if (!pending.empty()) {
    std::fprintf(stderr, "collide guardian: the run ended with %zu fault(s) in place; undoing\n",
                 pending.size());
  }
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    for (const std::string& failure : perform_undo(it->second)) {
      std::fprintf(stderr, "collide guardian: %s\n", failure.c_str());
    }
    remove_quietly(state_file(owner_dir, it->first));
  }
  remove_quietly(owner_dir / kGuardianFile);
  std::error_code ec;
  fs::remove(owner_dir, ec);  // only succeeds once empty
  _exit(0);
}

}  // namespace

std::vector<std::string> netns_command(const std::string& tool, const std::string& netns,
                                       std::vector<std::string> args) {
  std::vector<std::string> argv = {tool};
  if (!netns.empty()) {
    argv.push_back("-n");
    argv.push_back(netns);
  }
  argv.insert(argv.end(), std::make_move_iterator(args.begin()),
              std::make_move_iterator(args.end()));
  return argv;
}

std::string encode_undo(const UndoAction& action) {
  nlohmann::json steps = nlohmann::json::array();
  for (const UndoStep& step : action.steps) steps.push_back(encode_step(step));
  nlohmann::json j = {{"format", kUndoFormat},
                      {"description", action.description},
                      {"netns", action.netns},
                      {"devices", action.devices},
                      {"steps", std::move(steps)}};
  return j.dump();  // one line: the pipe protocol is line based
}

Result<UndoAction> decode_undo(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    UndoAction action;
    action.description = printable(j.at("description").get<std::string>());
    if (!j.contains("format") && j.contains("commands")) {
      return failed_precondition(fmt::format(
          "an undo record of an earlier collide, which held commands to run; collide no longer "
          "runs commands from state files. It says \"{}\": if that change is still in place, "
          "undo it by hand with ip or tc",
          action.description));
    }
    if (j.at("format").get<int>() != kUndoFormat) {
      return invalid_argument(fmt::format("undo record format {} (this collide reads {})",
                                          j.at("format").dump(), kUndoFormat));
    }
    action.netns = j.at("netns").get<std::string>();
    if (!action.netns.empty() && !is_netns_name(action.netns)) {
      return invalid_argument(fmt::format("netns \"{}\" is not a namespace name",
                                          printable(action.netns)));
    }
    action.devices = j.at("devices").get<std::vector<std::string>>();
    for (const nlohmann::json& step : j.at("steps")) {
      auto decoded = decode_step(step);
      if (!decoded.ok()) return decoded.status();
      action.steps.push_back(std::move(decoded).value());
    }
    return action;
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument(fmt::format("malformed undo record: {}", e.what()));
  }
}

namespace {

// Performs one step by a command of its own; a message if it failed.
std::optional<std::string> perform_step(const UndoAction& action, const UndoStep& step) {
  int xdp_mode = 0;
  if (step.op == UndoOp::kDetachXdp) {
    // Only the program that was recorded: the id may since belong to someone else's.
    auto attached = xdp_attachment(action.netns, step.dev);
    if (!attached.ok() || attached->prog_id != step.prog_id) {
      if (attached.ok() && attached->prog_id != 0) {
        return fmt::format("{}: {} now holds XDP program {}, not {}: left alone",
                           action.description, step.dev, attached->prog_id, step.prog_id);
      }
      return std::nullopt;
    }
    xdp_mode = attached->mode;
  }
  const std::vector<std::string> command = undo_argv(action.netns, step, xdp_mode);
  auto result = process::run_command(command);
  if (!result.ok()) {
    return fmt::format("{}: `{}`: {}", action.description, fmt::join(command, " "),
                       result.status().message());
  }
  if (result->exit_code != 0) {
    std::string output = result->output;
    while (!output.empty() && output.back() == '\n') output.pop_back();
    return fmt::format("{}: `{}` exited with {}: {}", action.description,
                       fmt::join(command, " "), result->exit_code, output);
  }
  return std::nullopt;
}

// Whether iproute2's batch reader takes the arguments word for word as a line: it splits at white
// space (which no checked step holds), reads quotes and backslashes, cuts the line at '#', and
// takes at most 100 words.
bool batchable(const IpStep& ip) {
  if (ip.args.size() > 90) return false;
  return std::none_of(ip.args.begin(), ip.args.end(), [](const std::string& word) {
    return word.find_first_of("#'\"\\") != std::string::npos;
  });
}

bool same_family(IpStep::Family a, IpStep::Family b) {
  return a == IpStep::Family::kAny || b == IpStep::Family::kAny || a == b;
}

// Runs the lines as one `ip -force -batch -`, which goes on past a failing line and names each
// ("Command failed -:N" after the error); a message per line that failed.
std::vector<std::string> perform_batch(const UndoAction& action, IpStep::Family family,
                                       const std::vector<std::string>& lines) {
  std::vector<std::string> args = family_option(family);
  args.insert(args.end(), {"-force", "-batch", "-"});
  const std::vector<std::string> command = netns_command("ip", action.netns, std::move(args));
  std::string input;
  for (const std::string& line : lines) input += line + "\n";
  auto result = process::run_command(command, input);
  if (!result.ok()) {
    return {fmt::format("{}: `{}`: {}", action.description, fmt::join(command, " "),
                        result.status().message())};
  }
  if (result->exit_code == 0) return {};
  std::vector<std::string> failures;
  std::istringstream output(result->output);
  std::string said;  // what ip printed since the last failed line
  constexpr std::string_view kFailed = "Command failed -:";
  for (std::string out; std::getline(output, out);) {
    if (out.rfind(kFailed, 0) != 0) {
      said += (said.empty() ? "" : " ") + out;
      continue;
    }
    auto number = parse_number<size_t>(out.substr(kFailed.size()), "batch line");
    const std::string line = number.ok() && *number >= 1 && *number <= lines.size()
                                 ? lines[*number - 1]
                                 : "-batch line " + out.substr(kFailed.size());
    failures.push_back(fmt::format("{}: `ip {}` failed: {}", action.description, line, said));
    said.clear();
  }
  if (failures.empty()) {
    failures.push_back(fmt::format("{}: `{}` of {} steps exited with {}: {}", action.description,
                                   fmt::join(command, " "), lines.size(), result->exit_code,
                                   result->output));
  }
  return failures;
}

}  // namespace

std::vector<std::string> perform_undo(const UndoAction& action) {
  std::vector<std::string> failures;
  const std::vector<UndoStep>& steps = action.steps;
  for (size_t i = 0; i < steps.size();) {
    auto first = ip_step(steps[i]);
    if (!first || !batchable(*first)) {
      if (auto failed = perform_step(action, steps[i])) failures.push_back(std::move(*failed));
      ++i;
      continue;
    }
    // The steps from here that ip performs with one family option run as one batch, in order.
    IpStep::Family family = first->family;
    std::vector<std::string> lines = {fmt::format("{}", fmt::join(first->args, " "))};
    size_t next = i + 1;
    for (; next < steps.size(); ++next) {
      auto ip = ip_step(steps[next]);
      if (!ip || !batchable(*ip) || !same_family(family, ip->family)) break;
      if (family == IpStep::Family::kAny) family = ip->family;
      lines.push_back(fmt::format("{}", fmt::join(ip->args, " ")));
    }
    if (lines.size() == 1) {
      if (auto failed = perform_step(action, steps[i])) failures.push_back(std::move(*failed));
    } else {
      for (std::string& failed : perform_batch(action, family, lines)) {
        failures.push_back(std::move(failed));
      }
    }
    i = next;
  }
  return failures;
}

fs::path default_state_dir() {
  if (const char* dir = std::getenv("COLLIDE_STATE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return "/run/collide";
}

fs::path owner_state_dir(const fs::path& state_dir, int pid, uint64_t start_time) {
  return state_dir / fmt::format("{}.{}", pid, start_time);
}

bool process_alive(int pid, uint64_t start_time) {
  const auto start = process_start_time(pid);
  if (!start || *start != start_time) return false;
  // A zombie undoes nothing: an orphaned guardian stays one until init reaps it, and the init of
  // a container may never do that.
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  std::getline(in, stat);
  const size_t close = stat.rfind(')');
  const char state = close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
  return state != 'Z' && state != 'X';
}

std::optional<uint64_t> process_start_time(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return std::nullopt;
  }
  auto start = parse_number<uint64_t>(field, "start time");
  if (!start.ok()) return std::nullopt;
  return *start;
}

Result<std::unique_ptr<Guardian>> Guardian::start(GuardianOptions options) {
  const pid_t self = getpid();
  const auto start_time = process_start_time(self);
  if (!start_time) return internal_error("cannot read this process's start time from /proc");
  std::unique_ptr<Guardian> guardian(new Guardian());
  guardian->owner_dir_ = owner_state_dir(options.state_dir, self, *start_time);
  // Checked as the sweep will check them: state it would refuse could not undo anything.
  COLLIDE_RETURN_IF_ERROR(make_state_folder(options.state_dir, fs::perms(0755)));
  COLLIDE_RETURN_IF_ERROR(make_state_folder(guardian->owner_dir_, fs::perms(0700)));

  int fds[2];
  // Close-on-exec: a program collide starts must not hold the write end, or the guardian would
  // wait for that program instead of for collide.
  if (pipe2(fds, O_CLOEXEC) != 0) return errno_status(errno, "creating the guardian pipe");
  std::fflush(nullptr);
  // The guardian's signals stay blocked from the fork until its handlers are in place, so a
  // Ctrl-C at that moment cannot kill it before it can clean up.
  sigset_t guarded, old_mask;
  sigemptyset(&guarded);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1}) sigaddset(&guarded, sig);
  pthread_sigmask(SIG_BLOCK, &guarded, &old_mask);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[1]);
    guardian_main(fds[0], self, guardian->owner_dir_, old_mask);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (child < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return errno_status(err, "forking the fault guardian");
  }
  close(fds[0]);
  guardian->child_pid_ = child;
  guardian->pipe_fd_ = fds[1];
  // A sweep leaves the state of a dead owner to its guardian while that one lives.
  if (const auto child_start = process_start_time(child); child_start) {
    write_state_file(guardian->owner_dir_ / kGuardianFile,
                     fmt::format("{} {}", child, *child_start))
        .ok();
  }
  logging::get("faults")->debug("fault guardian {} started; state in {}", child,
                                guardian->owner_dir_.string());
  return guardian;
}

Guardian::~Guardian() {
  undo_all();
  if (pipe_fd_ >= 0) close(pipe_fd_);
  if (child_pid_ > 0) {
    int status = 0;
    while (waitpid(child_pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  remove_quietly(owner_dir_ / kGuardianFile);
  std::error_code ec;
  fs::remove(owner_dir_, ec);
}

Status Guardian::send(const std::string& line) {
  // A dead guardian makes the write fail with EPIPE; the SIGPIPE that comes with it must not end
  // collide, so it is blocked here and any pending one consumed.
  sigset_t pipe_only, old_mask;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  Status status;
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = write(pipe_fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      status = errno_status(errno, "writing to the fault guardian");
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (!status.ok() && !sigismember(&old_mask, SIGPIPE)) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_only, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return status;
}

Result<uint64_t> Guardian::register_undo(const UndoAction& action) {
  for (const UndoStep& step : action.steps) {
    if (Status checked = check_step(step); !checked.ok()) {
      return checked.with_context(fmt::format("undo of {}", action.description));
    }
  }
  std::lock_guard lock(mutex_);
  const uint64_t id = next_id_++;
  const std::string encoded = encode_undo(action);
  COLLIDE_RETURN_IF_ERROR(write_state_file(state_file(owner_dir_, id), encoded));
  if (Status sent = send(fmt::format("R {} {}\n", id, encoded)); !sent.ok()) {
    remove_quietly(state_file(owner_dir_, id));
    return sent.with_context("the fault guardian is gone; refusing to inject");
  }
  pending_.emplace_back(id, action);
  return id;
}

void Guardian::undo(uint64_t id) {
  std::optional<UndoAction> action;
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(pending_.begin(), pending_.end(),
                           [&](const auto& entry) { return entry.first == id; });
    if (it == pending_.end()) return;
    action = std::move(it->second);
    pending_.erase(it);
  }
  for (const std::string& failure : perform_undo(*action)) {
    logging::get("faults")->warn("undo: {}", failure);
  }
  std::lock_guard lock(mutex_);
  send(fmt::format("F {}\n", id)).ok();
  remove_quietly(state_file(owner_dir_, id));
}

void Guardian::forget(uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const auto& entry) { return entry.first == id; });
  if (it == pending_.end()) return;
  pending_.erase(it);
  send(fmt::format("F {}\n", id)).ok();
  remove_quietly(state_file(owner_dir_, id));
}

void Guardian::undo_all() {
  while (true) {
    uint64_t id = 0;
    {
      std::lock_guard lock(mutex_);
      if (pending_.empty()) return;
      id = pending_.back().first;
    }
    undo(id);
  }
}

size_t Guardian::pending() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

}  // namespace collide::injectors
