#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "traces/import/importer.h"

// `collide trace ...`: each trace subcommand lives in its own file and is added to the `trace`
// parent by add_trace_commands (trace_command.cc).
namespace collide::cli {

void add_trace_commands(CLI::App& app);

// One function per subcommand file.
void add_trace_cat_command(CLI::App& trace);
void add_trace_import_command(CLI::App& trace);
void add_trace_convert_command(CLI::App& trace);
void add_trace_baseline_command(CLI::App& trace);
void add_trace_synth_command(CLI::App& trace);
void add_trace_stats_command(CLI::App& trace);
void add_trace_validate_command(CLI::App& trace);

// What an import did, as `trace import` and `trace convert --to collide` print it: problems,
// notes and lines not read on stderr, the summary line on stdout.
void print_import_report(const traces::ImportReport& report, const std::string& output,
                         double seconds);

}  // namespace collide::cli
