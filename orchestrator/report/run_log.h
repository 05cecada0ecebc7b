#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "orchestrator/report/run_result.h"

// runs.jsonl: one line of JSON per finished run (a variant, one repetition), appended as the
// scenario goes and on disk (fsync'd) before the next run starts, so that a soak stopped or
// killed hours in keeps every run it finished. A line is whole or absent: it goes out in one
// write, and one that could not be written whole is cut off again.
namespace collide::orchestrator::report {

// What one line says about a run.
struct RunLogEntry {
  std::string variant;
  uint32_t repetition = 0;  // from 0, as in report.json
  uint32_t iteration = 0;   // from 1: the pass over baseline and variants the run belongs to
  std::chrono::system_clock::time_point started{};
  std::optional<double> jct_s;  // none for a failed run
  bool failed = false;
  std::string failure;
  uint64_t collectives = 0;  // collectives every rank finished
  std::optional<double> p50_us, p99_us;  // of their completion times; none without any
  uint64_t retransmitted_packets = 0;
  uint64_t timeouts = 0;
  // Each fault (a recurring fault's every occurrence: "flap#2") that held during the run, its
  // window counted from the run's first op; what a soak's reader looks for after the 10 iterations
  // whose every detail report.json keeps.
  std::vector<FaultWindow> faults;
};

// The entry for a finished run: its collectives' completion times as the report measures them.
RunLogEntry run_log_entry(const RunResult& run, uint32_t iteration);

// The entry as one line of JSON, without the newline.
std::string run_log_line(const RunLogEntry& entry);

class RunLog {
 public:
  // Creates (or empties: the file describes this run, as report.json does) the log at `path`.
  static Result<RunLog> create(const std::filesystem::path& path);
  RunLog(RunLog&& other) noexcept;
  RunLog& operator=(RunLog&& other) noexcept;
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;
  ~RunLog();

  // Appends the entry's line and waits until it is on disk. On an error the file is as before.
  Status append(const RunLogEntry& entry);

  const std::filesystem::path& path() const { return path_; }

 private:
  RunLog(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace collide::orchestrator::report
