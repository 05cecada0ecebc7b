#pragma once

#include <CLI/CLI.hpp>

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

}  // namespace collide::cli
