// `collide trace stats`: op counts, bytes and traffic of a collide trace per op kind, per
// communicator, per iteration and for the job, under the full-mesh model and NCCL's algorithms.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/trace_commands.h"
#include "traces/analysis/stats_report.h"
#include "traces/analysis/trace_stats.h"

namespace collide::cli {
namespace {

struct StatsCommandOptions {
  std::string path;
  bool json = false;
  bool quiet = false;
  uint64_t minibatches_per_epoch = 0;
  uint32_t iteration_rows = 20;
  uint32_t communicator_rows = 50;
};

// Ops read so far, on stderr at most twice a second, when stderr is a terminal: a long trace
// shows it is moving without filling logs with carriage returns.
std::function<void(uint64_t)> progress_printer(bool quiet, const char* what) {
  if (quiet || isatty(STDERR_FILENO) == 0) return {};
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last, what](uint64_t ops) {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(500)) return;
    *last = now;
    std::cerr << fmt::format("\r{}: {:.1f} M ops read", what, static_cast<double>(ops) / 1e6)
              << std::flush;
  };
}

void run_stats(const StatsCommandOptions& opt) {
  auto progress = progress_printer(opt.quiet, "stats");
  auto stats = traces::analysis::compute_trace_stats(opt.path, progress);
  if (progress) std::cerr << "\r\033[K" << std::flush;
  if (!stats.ok()) fail("trace stats", kExitUsage, stats.status().message());
  traces::analysis::StatsReportOptions report;
  if (opt.minibatches_per_epoch > 0) report.minibatches_per_epoch = opt.minibatches_per_epoch;
  report.max_iteration_rows = opt.iteration_rows;
  report.max_communicator_rows = opt.communicator_rows;
  if (opt.json) {
    std::cout << traces::analysis::stats_json(*stats, report).dump(2) << "\n";
  } else {
    std::cout << traces::analysis::stats_table(*stats, report);
  }
}

}  // namespace

void add_trace_stats_command(CLI::App& trace) {
  auto opt = std::make_shared<StatsCommandOptions>();
  CLI::App* cmd = trace.add_subcommand(
      "stats", "Ops, bytes and traffic (full-mesh model and NCCL's algorithms) of a trace");
  cmd->add_option("trace", opt->path, "collide trace file (- for stdin)")->required();
  cmd->add_flag("--json", opt->json, "print JSON with exact byte counts");
  cmd->add_option("--minibatches-per-epoch", opt->minibatches_per_epoch,
                  "also project the traffic to an epoch of N mini-batches (the mean traced "
                  "iteration times N)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--iteration-rows", opt->iteration_rows,
                  "iterations the table lists (JSON lists all)");
  cmd->add_option("--communicator-rows", opt->communicator_rows,
                  "communicators the table lists (JSON lists all)");
  cmd->add_flag("--quiet", opt->quiet, "no progress on stderr");
  cmd->callback([opt] { run_stats(*opt); });
}

}  // namespace collide::cli
