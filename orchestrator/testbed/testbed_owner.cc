#include "orchestrator/testbed/testbed_owner.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

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

std::filesystem::path record_path(const std::string& name) { return owner_dir() / name; }

void write_record(const std::string& name, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(owner_dir(), ec);
  std::ofstream(record_path(name)) << text << "\n";
}

}  // namespace

std::filesystem::path owner_dir() {
  if (const char* dir = std::getenv("COLLIDE_TESTBED_STATE_DIR")) return dir;
  return "/run/collide/testbeds";
}

void record_owner(const std::string& name) {
  const long pid = getpid();
  write_record(name, std::to_string(pid) + " " + start_time_of(pid).value_or("?"));
}

void record_kept(const std::string& name) { write_record(name, "kept"); }

void forget_owner(const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(record_path(name), ec);
}

bool owner_is_gone(const std::string& name) {
  std::ifstream in(record_path(name));
  long pid = 0;
  std::string started;
  if (!(in >> pid >> started)) return false;  // no record, or kept: not ours to sweep
  const auto now = start_time_of(pid);
  return !now.has_value() || *now != started;
}

}  // namespace collide::orchestrator::testbed
