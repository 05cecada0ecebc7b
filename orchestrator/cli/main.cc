// collide: replay the collective traffic of AI training jobs as RoCEv2 and inject faults into it.
#include <iostream>

#include <CLI/CLI.hpp>
#include <google/protobuf/stubs/logging.h>

#include "common/logging.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/trace_commands.h"

namespace {

// Protobuf prints its own complaints about damaged input (e.g. invalid UTF-8 in a string field);
// collide reports such input as an error of its own, naming the file, so protobuf's words go to
// the debug log instead of cluttering the terminal.
void log_protobuf_message(google::protobuf::LogLevel level, const char* file, int line,
                          const std::string& message) {
  const auto spd_level = level >= google::protobuf::LOGLEVEL_FATAL ? spdlog::level::critical
                                                                   : spdlog::level::debug;
  collide::logging::get("protobuf")->log(spd_level, "{}:{}: {}", file, line, message);
}

}  // namespace

int main(int argc, char** argv) {
  google::protobuf::SetLogHandler(&log_protobuf_message);
  CLI::App app{
      "collide replays the collective traffic of AI training jobs (NCCL traces and the like) as "
      "RoCEv2 on hosts without GPUs, injects faults while it runs, and reports what they did to "
      "collective completion times and job completion time.",
      "collide"};
  app.set_version_flag("--version", std::string("collide ") + COLLIDE_VERSION);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->envname("COLLIDE_LOG");
  app.require_subcommand(0, 1);
  app.footer("`collide <subcommand> --help` describes each subcommand.");
  app.parse_complete_callback(
      [&] { collide::logging::set_level(spdlog::level::from_str(log_level)); });

  // Subcommands, one line per area (see commands.h).
  collide::cli::add_trace_commands(app);
  collide::cli::add_plan_command(app);
  collide::cli::add_testbed_command(app);
  collide::cli::add_replay_command(app);
  collide::cli::add_run_command(app);
  collide::cli::add_inject_command(app);
  collide::cli::add_agent_command(app);
  collide::cli::add_certs_command(app);
  collide::cli::add_compare_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }
  if (app.get_subcommands().empty()) std::cout << app.help();
  return 0;
}
