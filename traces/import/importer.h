#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

// What every importer shares: options, the report of what it read and what it could not, and the
// signature the `collide trace import` command dispatches on (traces/import/formats.cc).
namespace collide::traces {

struct ImportOptions {
  // The first input that cannot be understood is an error (by default it is counted, reported
  // with file and line, and skipped).
  bool strict = false;
  // How many problems the report keeps word for word; all are counted.
  uint32_t max_reported_problems = 100;
  // The job's rank (GPU) count, for inputs that do not say it or may not say all of it (an AICB
  // workload without all_gpus, Chakra traces of some ranks only); 0: not given.
  uint32_t world_size = 0;
  // Ranks of the job that the input never shows (e.g. logs of one node of several) get the
  // collectives of the whole-job communicator they must have joined, copied from a rank that
  // shows them, so the trace replays as the whole job. Formats that cannot tell ignore it.
  bool fill_unobserved_ranks = false;
  // Inputs whose ops carry their state (Flight Recorder dumps of a hung job): keep only what
  // every rank of each communicator got through, so a replay runs the job up to its hang and
  // stops there (traces/flight_recorder/stop_at_hang.h). Formats without states refuse it.
  bool stop_at_hang = false;
  // Called now and then with the input bytes read so far and the total, for progress on long
  // imports; may be empty.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// Something an importer could not use, and where it was ("file:line" or "file:record N").
struct ImportProblem {
  std::string where;
  std::string what;
};

// Lines (or records) of one kind the importer does not read, e.g. NCCL INFO messages of other
// subsystems: not problems (nothing is wrong with them), but counted and said, so that nothing
// is left out silently.
struct UnreadLines {
  std::string kind;
  uint64_t lines = 0;
  std::string first_where;  // "file:line" of the first
  std::string example;      // the start of the first
};

struct ImportReport {
  uint64_t ops = 0;             // ops written
  uint32_t ranks = 0;           // ranks in the trace
  uint32_t communicators = 0;
  uint64_t units_read = 0;      // lines, records or nodes read, whatever the format counts
  uint64_t problems_total = 0;  // everything skipped, counted
  std::vector<ImportProblem> problems;  // the first max_reported_problems of them
  // What the import assumed, inferred or skipped by design, one line each (not problems:
  // nothing is wrong with the input), e.g. where the world size came from.
  std::vector<std::string> notes;
  std::vector<UnreadLines> unread;  // by kind, in order of first appearance

  // Records a problem: counted always, kept while there is room.
  void add_problem(const ImportOptions& options, std::string where, std::string what);
};

// Reads `inputs` (files, or directories where the format says so) and writes a collide trace to
// `output`. Errors name the file (and line where there is one); in strict mode the first problem
// is an error, otherwise problems are counted in the report and skipped.
using ImportFunction = Result<ImportReport> (*)(const std::vector<std::string>& inputs,
                                                const std::string& output,
                                                const ImportOptions& options);

struct ImportFormat {
  std::string name;         // as given to --format: "nccl", "chakra", "aicb", ...
  std::string description;  // one line for --help
  ImportFunction import;
};

}  // namespace collide::traces
