// collide_nccl_import_bench: imports NCCL logs exactly as `collide trace import --format nccl`
// does (the same import_nccl_logs), without the rest of the command line tool, and prints the
// phases' wall and CPU times. For profiling the importer on its own.
//
//   collide_nccl_import_bench [--streamed] <output.trace> <log>...
//
// --streamed streams the ops whatever the input's size (see nccl_import.h).
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/logging.h"
#include "traces/nccl/nccl_import.h"

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  const char* program = argv[0];
  const bool streamed = argc > 1 && std::string(argv[1]) == "--streamed";
  if (streamed) {
    ++argv;
    --argc;
  }
  if (argc < 3) {
    fmt::print(stderr, "usage: {} [--streamed] <output.trace> <log>...\n", program);
    return 2;
  }
  collide::logging::set_level_from_env();  // COLLIDE_LOG=debug: the phases' times
  const std::vector<std::string> inputs(argv + 2, argv + argc);
  const auto started = std::chrono::steady_clock::now();
  const double cpu_before = cpu_seconds();
  auto report = streamed ? collide::traces::nccl::import_nccl_logs_streamed(inputs, argv[1], {})
                         : collide::traces::nccl::import_nccl_logs(inputs, argv[1], {});
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!report.ok()) {
    fmt::print(stderr, "{}\n", report.status().to_string());
    return 1;
  }
  fmt::print("{} ops, {} problems; wall {:.3f} s, cpu {:.3f} s\n", report->ops,
             report->problems_total, wall, cpu_seconds() - cpu_before);
  return 0;
}
