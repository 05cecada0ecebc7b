#include "orchestrator/cli/trace_commands.h"

namespace collide::cli {

void add_trace_commands(CLI::App& app) {
  CLI::App* trace = app.add_subcommand("trace", "Import, synthesize, inspect and check traces");
  trace->require_subcommand(1);
  add_trace_cat_command(*trace);
  add_trace_import_command(*trace);
  add_trace_convert_command(*trace);
  add_trace_baseline_command(*trace);
  add_trace_synth_command(*trace);
  add_trace_stats_command(*trace);
  add_trace_validate_command(*trace);
}

}  // namespace collide::cli
