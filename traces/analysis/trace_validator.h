#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "traces/analysis/hang_frontier.h"

// Checks that a collide trace describes a job that could have run:
//  - the header's communicators name ranks of the job, once each, and all the ranks the source
//    said they have (Communicator.declared_size);
//  - each rank's op indices run 0, 1, 2, ... in file order;
//  - every op names a declared communicator its rank belongs to, and a root or peer inside it;
//  - every member of a communicator issues the same sequence of collectives (kind, count, bytes,
//    datatype, reduce op, root);
//  - per communicator and ordered pair of ranks, the k-th send matches the k-th recv (bytes);
//  - where ops carry a state (Flight Recorder dumps of a hung job), every op completed; each
//    communicator's hang frontier (see hang_frontier.h) is an issue;
//  - in the k-th all-to-allv of a communicator, what each rank sends to each other is what that
//    one expects to receive from it, where receive sizes are given (see alltoallv_matcher.h).
//
// Streaming in bounded memory, designed for files written rank by rank (where one rank's whole
// stream precedes the next, so holding a member's sequence until the others catch up would hold
// the trace): the first pass keeps, per (communicator, member) and per (communicator, sender,
// receiver) sequence, a count and a rolling 64-bit hash of the op signatures, plus the hash
// after every `checkpoint_interval` ops (memory: ops / interval x 8 bytes). Members whose (count,
// hash) differ from the communicator's majority, and pairs whose send and recv sides differ, are
// mismatches; a second pass, only when there are some, reads the file again and keeps just the
// one block of ops where the checkpoints first part, to name the first differing op. A hash
// collision (odds about 2^-64 per sequence) would let a mismatch pass unseen.
namespace collide::traces::analysis {

struct ValidationIssue {
  uint64_t file_position = 0;        // the op's number in the file, from 1; 0 for the header
  std::string comm;                  // communicator id, where the issue has one
  std::optional<uint32_t> rank;      // global rank
  std::optional<uint64_t> op_index;  // Op.index of the offending op
  std::string source;                // Op.source of the op ("file:line"), where known
  std::string message;

  // "comm dp, rank 3, op 12 (log.txt:40): message"
  std::string to_string() const;
};

struct ValidationReport {
  uint64_t ops_read = 0;
  uint64_t issues_total = 0;            // every problem found, counted
  std::vector<ValidationIssue> issues;  // the first max_reported of them, in file order
  HangFrontier frontier;                // where ops carry states; issues repeat it in words
  bool valid() const { return issues_total == 0; }
};

struct ValidateOptions {
  uint32_t max_reported = 20;
  uint32_t checkpoint_interval = 1024;
  // Called every 2^16 ops with the pass (1 or 2) and the ops read in it; may be empty.
  std::function<void(int pass, uint64_t ops)> progress;
};

// Validates the trace at `path` (a file: it may be read twice, so not "-"). An unreadable or
// damaged file is an error naming it; problems in a readable trace are issues in the report.
Result<ValidationReport> validate_trace(const std::string& path, const ValidateOptions& options);

}  // namespace collide::traces::analysis
