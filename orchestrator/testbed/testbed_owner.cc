#include "orchestrator/testbed/testbed_owner.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/parse_number.h"

namespace collide::orchestrator::testbed {
namespace {

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot.
std::optional<std::string> start_time_of(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // The command name (field 2) may hold spaces; fields after it start past its ')'.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
  }
  return field;
}

// /proc/<pid>/cmdline with its NULs as spaces, cut to a readable length.
std::string command_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text) {
    if (c == '\0') c = ' ';
  }
  constexpr size_t kMax = 120;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

std::filesystem::path record_path(const std::string& name) { return owner_dir() / name; }

void write_record(const std::string& name, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(owner_dir(), ec);
  std::ofstream(record_path(name)) << text << "\n";
}

std::string running_owner(const TestbedOwner& owner) {
  return owner.command.empty() ? fmt::format("pid {}", owner.pid)
                               : fmt::format("pid {}: {}", owner.pid, owner.command);
}

}  // namespace

std::filesystem::path owner_dir() {
  if (const char* dir = std::getenv("COLLIDE_TESTBED_STATE_DIR")) return dir;
  return "/run/collide/testbeds";
}

void record_owner(const std::string& name, pid_t pid) {
  write_record(name, std::to_string(pid) + " " + start_time_of(pid).value_or("?"));
}

void record_kept(const std::string& name) { write_record(name, "kept"); }

void forget_owner(const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(record_path(name), ec);
}

TestbedOwner owner_of(const std::string& name) {
  TestbedOwner owner;
  std::ifstream in(record_path(name));
  std::string first;
  std::string started;
  if (!(in >> first)) return owner;
  if (first == "kept") {
    owner.state = TestbedOwner::State::kKept;
    return owner;
  }
  auto pid = parse_number<pid_t>(first, record_path(name).string() + ": owner pid");
  if (!pid.ok() || *pid <= 0 || !(in >> started)) return owner;  // not a record we wrote
  owner.pid = *pid;
  const auto now = start_time_of(owner.pid);
  if (!now.has_value() || *now != started) {
    owner.state = TestbedOwner::State::kGone;
    return owner;
  }
  owner.state = TestbedOwner::State::kRunning;
  owner.command = command_of(owner.pid);
  return owner;
}

bool owner_is_gone(const std::string& name) {
  return owner_of(name).state == TestbedOwner::State::kGone;
}

Status may_take_down(const std::string& name) {
  const TestbedOwner owner = owner_of(name);
  if (owner.state != TestbedOwner::State::kRunning) return {};
  return failed_precondition(fmt::format(
      "testbed {} is in use by a process that still runs ({}); removing it would leave that "
      "run stuck. Stop that process instead: it removes its testbed as it ends",
      name, running_owner(owner)));
}

std::string already_exists_message(const std::string& name) {
  const TestbedOwner owner = owner_of(name);
  switch (owner.state) {
    case TestbedOwner::State::kRunning:
      return fmt::format(
          "testbed {} already exists and is in use by a process that still runs ({}): wait for "
          "it to end or stop it (it removes its testbed as it ends), or use another name",
          name, running_owner(owner));
    case TestbedOwner::State::kGone:
      return fmt::format(
          "testbed {} already exists, left by process {} that has ended: the next run of this "
          "name sweeps it, or remove it now with `collide testbed down {}`",
          name, owner.pid, name);
    case TestbedOwner::State::kKept:
      return fmt::format(
          "testbed {} already exists, kept by `collide testbed up`: remove it with "
          "`collide testbed down {}`",
          name, name);
    case TestbedOwner::State::kUnknown:
      break;
  }
  return fmt::format(
      "testbed {} already exists and no process is recorded as its owner: if nothing uses it, "
      "remove it with `collide testbed down {}`",
      name, name);
}

}  // namespace collide::orchestrator::testbed
