// `collide trace validate`: checks that the ranks of each communicator issue the same
// collectives, that sends meet their recvs, and that indices and ranks are sound. Exit 0 when
// valid, 1 when not, 2 when the file cannot be read.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/trace_commands.h"
#include "traces/analysis/trace_validator.h"

namespace collide::cli {
namespace {

struct ValidateCommandOptions {
  std::string path;
  bool json = false;
  bool quiet = false;
  uint32_t max_reported = 20;
};

std::function<void(int, uint64_t)> progress_printer(bool quiet) {
  if (quiet || isatty(STDERR_FILENO) == 0) return {};
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last](int pass, uint64_t ops) {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(500)) return;
    *last = now;
    std::cerr << fmt::format("\rvalidate pass {}: {:.1f} M ops read", pass,
                             static_cast<double>(ops) / 1e6)
              << std::flush;
  };
}

nlohmann::json issue_json(const traces::analysis::ValidationIssue& issue) {
  nlohmann::json j = {{"file_position", issue.file_position}, {"message", issue.message}};
  if (!issue.comm.empty()) j["comm"] = issue.comm;
  if (issue.rank) j["rank"] = *issue.rank;
  if (issue.op_index) j["op_index"] = *issue.op_index;
  if (!issue.source.empty()) j["source"] = issue.source;
  return j;
}

void run_validate(const ValidateCommandOptions& opt) {
  traces::analysis::ValidateOptions options;
  options.max_reported = opt.max_reported;
  options.progress = progress_printer(opt.quiet);
  auto report = traces::analysis::validate_trace(opt.path, options);
  if (options.progress) std::cerr << "\r\033[K" << std::flush;
  if (!report.ok()) fail("trace validate", kExitUsage, report.status().message());
  if (opt.json) {
    nlohmann::json j = {{"trace", opt.path},
                        {"valid", report->valid()},
                        {"ops", report->ops_read},
                        {"issues_total", report->issues_total},
                        {"issues", nlohmann::json::array()}};
    for (const auto& issue : report->issues) j["issues"].push_back(issue_json(issue));
    if (report->frontier.has_states) {
      j["hang_frontier"] = traces::analysis::frontier_json(report->frontier);
    }
    std::cout << j.dump(2) << "\n";
  } else if (report->valid()) {
    std::cout << fmt::format("{}: valid ({} ops)\n", opt.path, report->ops_read);
  } else {
    for (const auto& issue : report->issues) {
      std::cout << opt.path << ": " << issue.to_string() << "\n";
    }
    if (report->issues_total > report->issues.size()) {
      std::cout << fmt::format("... and {} more\n", report->issues_total - report->issues.size());
    }
    std::cout << fmt::format("{}: {} mismatches in {} ops\n", opt.path, report->issues_total,
                             report->ops_read);
  }
  if (!report->valid()) throw CLI::RuntimeError(kExitFailed);
}

}  // namespace

void add_trace_validate_command(CLI::App& trace) {
  auto opt = std::make_shared<ValidateCommandOptions>();
  CLI::App* cmd = trace.add_subcommand(
      "validate", "Check that a trace's ranks agree (exit 0 valid, 1 not, 2 unreadable)");
  cmd->add_option("trace", opt->path, "collide trace file")->required();
  cmd->add_flag("--json", opt->json, "print the result as JSON");
  cmd->add_option("--max-reported", opt->max_reported,
                  "mismatches printed in full (all are counted)");
  cmd->add_flag("--quiet", opt->quiet, "no progress on stderr");
  cmd->callback([opt] { run_validate(*opt); });
}

}  // namespace collide::cli
