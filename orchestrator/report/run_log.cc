#include "orchestrator/report/run_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "orchestrator/report/collective_times.h"
#include "orchestrator/report/statistics.h"

namespace collide::orchestrator::report {
namespace {

// "2026-11-28T06:10:00.123Z"
std::string utc_text(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

nlohmann::ordered_json number_or_null(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

// A fault's window in ms from the run's first op ("end_ms" null: it held to the run's end).
nlohmann::ordered_json fault_lines(const std::vector<FaultWindow>& faults) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const FaultWindow& f : faults) {
    out.push_back({{"name", f.name},
                   {"kind", f.kind},
                   {"start_ms", static_cast<double>(f.start_ns) / 1e6},
                   {"end_ms", f.end_ns == 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(static_cast<double>(f.end_ns) / 1e6)},
                   {"packets_acted", f.packets_acted}});
  }
  return out;
}

// Makes the file's name itself durable: fsync of the folder that holds it.
Status sync_folder(const std::filesystem::path& file) {
  const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : ".";
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, "cannot open " + folder.string());
  const int synced = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (synced != 0) return errno_status(err, "cannot sync " + folder.string());
  return {};
}

}  // namespace

RunLogEntry run_log_entry(const RunResult& run, uint32_t iteration) {
  RunLogEntry e;
  e.variant = run.variant;
  e.repetition = run.repetition;
  e.iteration = iteration;
  e.started = run.started;
  e.failed = run.failed;
  e.failure = run.failure;
  // A failure is written "a; b; ": the separators are the runner's, not part of the reason.
  while (!e.failure.empty() && (e.failure.back() == ' ' || e.failure.back() == ';')) e.failure.pop_back();
  if (!run.failed) e.jct_s = static_cast<double>(job_completion_ns(run)) / 1e9;
  std::vector<double> us;
  for (const CollectiveTime& c : collective_times(run)) {
    if (c.failed || c.ranks_seen < c.comm_size) continue;
    us.push_back(c.seconds() * 1e6);
  }
  e.collectives = us.size();
  if (!us.empty()) {
    e.p50_us = quantile(us, 0.5);
    e.p99_us = quantile(us, 0.99);
  }
  e.retransmitted_packets = run.retransmitted_packets;
  e.timeouts = run.timeouts;
  e.faults = held_fault_windows(run);
  return e;
}

std::string run_log_line(const RunLogEntry& e) {
  // In this order, for people who read the file as it grows.
  const nlohmann::ordered_json line = {
      {"variant", e.variant},
      {"repetition", e.repetition},
      {"iteration", e.iteration},
      // A run stopped before its start instant was set has none.
      {"started", e.started == std::chrono::system_clock::time_point{} ? nlohmann::ordered_json()
                                                                        : nlohmann::ordered_json(utc_text(e.started))},
      {"jct_s", number_or_null(e.jct_s)},
      {"failed", e.failed},
      {"failure", e.failure},
      {"collectives", e.collectives},
      {"p50_us", number_or_null(e.p50_us)},
      {"p99_us", number_or_null(e.p99_us)},
      {"retransmitted_packets", e.retransmitted_packets},
      {"timeouts", e.timeouts},
      {"faults", fault_lines(e.faults)},
  };
  // Invalid UTF-8 in a failure (an agent's message) is replaced rather than thrown on.
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<RunLog> RunLog::create(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status(errno, "cannot create " + path.string());
  RunLog log(path, fd);
  COLLIDE_RETURN_IF_ERROR(sync_folder(path));
  return log;
}

RunLog::RunLog(RunLog&& other) noexcept : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

RunLog& RunLog::operator=(RunLog&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RunLog::~RunLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status RunLog::append(const RunLogEntry& entry) {
  if (fd_ < 0) return failed_precondition(path_.string() + " is not open");
  const std::string line = run_log_line(entry) + "\n";
  struct stat before {};
  if (::fstat(fd_, &before) != 0) return errno_status(errno, "cannot read the size of " + path_.string());
  // One write: a process killed before or after it leaves the line whole or absent. (The kernel
  // checks for a kill between the pages it copies, so a kill landing inside the microseconds of a
  // write that crosses a page boundary could still cut it; once a run, that is left as it is.)
  // A short write (a full disk, a file size limit) is finished, or else cut off again.
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const Status why = errno_status(n < 0 ? errno : EIO, "cannot append to " + path_.string());
      if (written > 0 && ::ftruncate(fd_, before.st_size) != 0) {
        return errno_status(errno, fmt::format("{} ends in a partial line ({}), and cutting it off failed",
                                               path_.string(), why.message()));
      }
      return why;
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd_) != 0) return errno_status(errno, "cannot sync " + path_.string());
  return {};
}

}  // namespace collide::orchestrator::report
