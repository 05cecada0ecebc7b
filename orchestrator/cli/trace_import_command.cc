// `collide trace import`: reads a trace in any supported format and writes a collide trace.
// Problems in the input are reported with file and line and counted; --strict makes the first
// one an error.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/trace_commands.h"
#include "traces/import/detect_format.h"
#include "traces/import/formats.h"

namespace collide::cli {
namespace {

struct ImportCommandOptions {
  std::string format;
  std::vector<std::string> inputs;
  std::string output;
  bool strict = false;
  bool fill_unobserved_ranks = false;
  bool stop_at_hang = false;
  bool quiet = false;
  uint32_t max_problems = 20;
  uint32_t world_size = 0;
};

std::string format_list() {
  std::string list;
  for (const traces::ImportFormat& f : traces::import_formats()) {
    list += fmt::format("\n  {:<12} {}", f.name, f.description);
  }
  return list;
}

// Progress on stderr at most twice a second, so a long import shows it is moving.
// On a terminal one line redrawn twice a second; in a log (CI, a pipe) a plain line every ten
// seconds, without the escape sequences that would litter it.
std::function<void(uint64_t, uint64_t)> progress_printer(bool quiet, bool terminal) {
  if (quiet) return {};
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  const auto every = terminal ? std::chrono::milliseconds(500) : std::chrono::milliseconds(10000);
  return [last, every, terminal](uint64_t done, uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last < every) return;
    *last = now;
    const std::string text =
        total > 0 ? fmt::format("import: {:.0f} of {:.0f} MB ({:.0f}%)", done / 1e6, total / 1e6,
                                100.0 * static_cast<double>(done) / static_cast<double>(total))
                  : fmt::format("import: {:.0f} MB", done / 1e6);
    std::cerr << (terminal ? "\r" : "") << text << (terminal ? "" : "\n") << std::flush;
  };
}

void run_import(const ImportCommandOptions& opt) {
  std::string format_name = opt.format;
  if (format_name.empty()) {
    auto detected = traces::detect_import_format(opt.inputs);
    if (!detected.ok()) fail("trace import", kExitUsage, detected.status().message());
    format_name = *detected;
    if (!opt.quiet) std::cerr << fmt::format("import: format {} (from the content)\n", format_name);
  }
  const traces::ImportFormat* format = traces::find_import_format(format_name);
  if (format == nullptr) {
    fail("trace import", kExitUsage,
         fmt::format("unknown format '{}'; known formats:{}", format_name, format_list()));
  }
  // Only Flight Recorder dumps say how far each op got.
  constexpr std::string_view kStatefulFormat = "flight-recorder";
  if (opt.stop_at_hang && format_name != kStatefulFormat) {
    fail("trace import", kExitUsage,
         fmt::format("--stop-at-hang needs ops that say how far they got: only -f {} has them, "
                     "not {}",
                     kStatefulFormat, format_name));
  }
  traces::ImportOptions options;
  options.strict = opt.strict;
  options.fill_unobserved_ranks = opt.fill_unobserved_ranks;
  options.stop_at_hang = opt.stop_at_hang;
  options.max_reported_problems = opt.max_problems;
  options.world_size = opt.world_size;
  const bool terminal = isatty(STDERR_FILENO) == 1;
  options.progress = progress_printer(opt.quiet, terminal);
  const auto started = std::chrono::steady_clock::now();
  auto report = format->import(opt.inputs, opt.output, options);
  if (options.progress && terminal) std::cerr << "\r\033[K";
  if (!report.ok()) fail("trace import", kExitUsage, report.status().message());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  print_import_report(*report, opt.output, seconds);
}

}  // namespace

void print_import_report(const traces::ImportReport& report, const std::string& output,
                         double seconds) {
  for (const traces::ImportProblem& p : report.problems) {
    std::cerr << p.where << ": " << p.what << "\n";
  }
  for (const std::string& note : report.notes) std::cerr << "note: " << note << "\n";
  if (report.problems_total > report.problems.size()) {
    std::cerr << fmt::format("... and {} more problems\n",
                             report.problems_total - report.problems.size());
  }
  // Lines of kinds not read: the most frequent kinds with an example each, then the rest counted.
  uint64_t unread = 0;
  for (const traces::UnreadLines& u : report.unread) unread += u.lines;
  if (unread > 0) {
    std::vector<const traces::UnreadLines*> kinds;
    for (const traces::UnreadLines& u : report.unread) kinds.push_back(&u);
    std::stable_sort(kinds.begin(), kinds.end(),
                     [](const auto* a, const auto* b) { return a->lines > b->lines; });
    constexpr size_t kKindsShown = 5;
    std::cerr << fmt::format("{} lines of kinds not read (skipped, not problems):\n", unread);
    std::string rest;
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (i >= kKindsShown) {
        rest += fmt::format("{}{} {}", rest.empty() ? "" : ", ", kinds[i]->lines, kinds[i]->kind);
        continue;
      }
      std::cerr << fmt::format("  {} {}, e.g. {}: {}\n", kinds[i]->lines, kinds[i]->kind,
                               kinds[i]->first_where, kinds[i]->example);
    }
    if (!rest.empty()) std::cerr << "  and " << rest << "\n";
  }
  std::cout << fmt::format(
      "imported {} ops of {} ranks in {} communicators from {} {} in {:.2f} s; {} skipped{}; "
      "wrote {}\n",
      report.ops, report.ranks, report.communicators, report.units_read,
      report.units_read == 1 ? "unit" : "units", seconds, report.problems_total,
      unread > 0 ? fmt::format("; {} lines of kinds not read", unread) : "", output);
}

void add_trace_import_command(CLI::App& trace) {
  auto opt = std::make_shared<ImportCommandOptions>();
  CLI::App* cmd = trace.add_subcommand("import", "Convert a trace of another format to a collide trace");
  cmd->add_option("--format,-f", opt->format,
                  "input format (see below); without it, told from the first input's content");
  cmd->add_option("inputs", opt->inputs, "input files (or directories, where the format says)")
      ->required();
  cmd->add_option("--output,-o", opt->output, "the collide trace to write")->required();
  cmd->add_flag("--strict", opt->strict, "fail on the first input that cannot be understood");
  cmd->add_flag("--fill-unobserved-ranks", opt->fill_unobserved_ranks,
                "give ranks the input never shows (logs of some nodes only) the whole-job "
                "collectives they must have joined, so the trace replays as the whole job");
  cmd->add_flag("--stop-at-hang", opt->stop_at_hang,
                "Flight Recorder dumps of a hung job: keep per process group only the collectives "
                "every rank completed (and the one the job hung in when every rank started it), "
                "so a replay runs the job up to its hang; the header says where it was cut");
  cmd->add_option("--max-problems", opt->max_problems, "problems to print word for word")
      ->capture_default_str();
  cmd->add_option("--world-size", opt->world_size,
                  "the job's GPU (rank) count, where the input does not say it: AICB files "
                  "without all_gpus (micro tests), Chakra traces of some ranks only, NCCL logs "
                  "whose lines print no nranks (a disagreeing nranks is an error)")
      ->check(CLI::Range(1u, 1u << 24));
  cmd->add_flag("--quiet,-q", opt->quiet, "no progress on stderr");
  cmd->footer("Formats:" + format_list());
  cmd->callback([opt] { run_import(*opt); });
}

}  // namespace collide::cli
