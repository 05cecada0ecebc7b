#include "injectors/state_sweep.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "common/parse_number.h"
#include "injectors/guardian.h"
#include "injectors/state_file.h"

namespace collide::injectors {
namespace {

namespace fs = std::filesystem;

// Pending undos of one owner, oldest first (the file names are increasing ids).
std::map<uint64_t, fs::path> records_of(const fs::path& owner, StateSweepReport& report) {
  std::map<uint64_t, fs::path> records;
  std::error_code ec;
  for (const fs::directory_entry& file : fs::directory_iterator(owner, ec)) {
    const std::string stem = file.path().stem().string();
    if (file.path().extension() != ".json" || stem.empty() ||
        !std::all_of(stem.begin(), stem.end(), ::isdigit)) {
      continue;
    }
    auto id = parse_number<uint64_t>(stem, file.path().string() + ": record id");
    if (!id.ok()) {
      report.errors.push_back(id.status().message());
      continue;
    }
    records[*id] = file.path();
  }
  return records;
}

// Undoes (or, for a live owner, lists) one owner's records. Returns false when a record was
// refused, so that the owner's folder stays for people to look at.
bool sweep_owner(const fs::path& owner, int pid, bool alive, StateSweepReport& report) {
  bool all_read = true;
  const auto records = records_of(owner, report);
  for (auto it = records.rbegin(); it != records.rend(); ++it) {  // newest first
    const fs::path& path = it->second;
    auto text = read_state_file(path);
    auto action = text.ok() ? decode_undo(*text) : Result<UndoAction>(text.status());
    if (!action.ok()) {
      const std::string message = action.status().message();
      report.errors.push_back(message.starts_with(path.string())
                                  ? message
                                  : fmt::format("{}: {}", path.string(), message));
      all_read = false;
      continue;
    }
    std::error_code ec;
    if (!action->netns.empty() && !fs::exists("/run/netns/" + action->netns)) {
      report.removed.push_back(fmt::format("dropped the record of {} (namespace {} is gone)",
                                           action->description, action->netns));
      fs::remove(path, ec);
      continue;
    }
    if (alive) {
      for (const std::string& device : action->devices) {
        report.live_devices.emplace(action->netns, device);
      }
      report.kept.push_back(
          fmt::format("{} (collide process {} or its guardian is still running)", action->description, pid));
      continue;
    }
    const auto failures = perform_undo(*action);
    report.removed.push_back(
        fmt::format("undid {} (left by process {})", action->description, pid));
    report.errors.insert(report.errors.end(), failures.begin(), failures.end());
    fs::remove(path, ec);
  }
  return all_read;
}

// Whether the guardian the owner named is running (it then performs the owner's undos itself).
bool guardian_alive(const fs::path& owner) {
  std::error_code ec;
  if (!fs::exists(owner / kGuardianFile, ec)) return false;
  auto text = read_state_file(owner / kGuardianFile);
  if (!text.ok()) return false;
  const size_t space = text->find(' ');
  if (space == std::string::npos) return false;
  auto pid = parse_number<int>(text->substr(0, space), "guardian pid");
  std::string start_text = text->substr(space + 1);
  while (!start_text.empty() && start_text.back() == '\n') start_text.pop_back();
  auto start = parse_number<uint64_t>(start_text, "guardian start time");
  return pid.ok() && start.ok() && process_alive(*pid, *start);
}

// Held while sweeping, so that collide processes starting together (the agents of one run) do
// not perform the same undo twice.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& folder)
      : fd_(open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~FolderLock() {
    if (fd_ >= 0) close(fd_);
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_;
};

}  // namespace

StateSweepReport sweep_state(const fs::path& state_dir) {
  StateSweepReport report;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(state_dir, ec))) return report;
  if (Status checked = check_state_folder(state_dir); !checked.ok()) {
    report.errors.push_back(checked.message());
    return report;
  }
  FolderLock lock(state_dir);
  static const std::regex kOwner(R"((\d+)\.(\d+))");
  for (const fs::directory_entry& entry : fs::directory_iterator(state_dir, ec)) {
    const fs::path& owner = entry.path();
    std::smatch m;
    const std::string name = owner.filename().string();
    if (!std::regex_match(name, m, kOwner)) continue;
    auto pid = parse_number<int>(m.str(1), owner.string() + ": owner pid");
    if (!pid.ok()) {
      report.errors.push_back(pid.status().message());
      continue;
    }
    if (Status checked = check_state_folder(owner); !checked.ok()) {
      report.errors.push_back(checked.message());
      continue;
    }
    auto start = parse_number<uint64_t>(m.str(2), owner.string() + ": owner start time");
    const bool alive =
        (start.ok() && process_alive(*pid, *start)) || guardian_alive(owner);
    const bool all_read = sweep_owner(owner, *pid, alive, report);
    if (alive) continue;
    if (all_read) {
      fs::remove_all(owner, ec);
    } else {
      report.errors.push_back(fmt::format(
          "{}: kept for the record(s) refused above; once dealt with, remove {} by hand",
          owner.string(), owner.string()));
    }
  }
  return report;
}

}  // namespace collide::injectors
