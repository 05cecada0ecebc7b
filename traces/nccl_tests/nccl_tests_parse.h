#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collide/baseline.pb.h"
#include "common/result.h"

// nccl-tests results as a baseline record (proto/collide/baseline.proto).
// Text: the table nccl-tests prints, with any of its headers (the old one with an `error` column
// and no root, the current `size count type redop root time algbw busbw #wrong` x2, the
// per-iteration and timestamp variants): columns are found by name in the header line, so rows
// are read by what the header says. Rows glued to other output, launcher prefixes such as
// `[1,0]<stdout>:` and NCCL log lines around the table are tolerated.
// JSON: the file recent nccl-tests (2.17) write when --output_file names a .json file (format 2:
// "results" with size, count, type, redop, root, out_of_place / in_place {time or cpu_time,
// alg_bw, bus_bw, nwrong}, "average_bus_bandwidth", "out_of_bounds", "config", "devices").
// rccl-tests JSON (--output_file with --output_format json, rccl-tests' own Reporter): records
// {"name": "AllReduce", "size" (bytes), "type", "redop", "inPlace": 0|1, "time" (us), "algBw",
// "busBw", wrong elements as a string ("0" or "N/A"), and "gpus" (built without MPI) or "nodes",
// "ranks", "ranksPerNode", "gpusPerRank" (with MPI)}. First written one record per line with
// "#wrong" (JSON Lines); since mid 2025 one JSON list of records with "numCycle" and "wrong".
// The out-of-place and in-place records of one size become one row.
// A table or report without a single result row is an error: there is no baseline in it.
namespace collide::traces::nccl_tests {

struct Parsed {
  v1::NcclTestsBaseline baseline;
  std::vector<std::string> problems;  // "file:line: what" for rows that could not be read
};

Result<Parsed> parse_text(std::string_view text, const std::string& file);
Result<Parsed> parse_json(std::string_view text, const std::string& file);
Result<Parsed> parse_rccl_json(std::string_view text, const std::string& file);
// Reads `path`: nccl-tests JSON, rccl-tests JSON (lines or list) or text, by its first bytes.
Result<Parsed> read_baseline(const std::string& path);

// "all_reduce_perf" (or a path to it, or "all_reduce") -> OP_KIND_ALL_REDUCE; UNSPECIFIED if
// unknown.
v1::OpKind kind_from_test_name(std::string_view name);

}  // namespace collide::traces::nccl_tests
